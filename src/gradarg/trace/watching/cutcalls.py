"""The finding "cut from the graph": a module with parameters that require grad returned an
output without autograd history, and the grad mode it ran in (``torch.no_grad()``,
``torch.inference_mode()``, a reentrant ``torch.utils.checkpoint`` none of whose inputs
requires grad, or grad mode on: detached or unused), read by the recorder at each call; for a
call with grad mode on around it, the mode of the call inside it that ran without a graph.

Imports :mod:`.finding` and :mod:`.graphnotes` (``runs_inside``) only (:mod:`.records`
and :mod:`.watch` for their types).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .finding import Finding, Options
from .graphnotes import runs_inside
from .missing import unheld

if TYPE_CHECKING:
    from .records import ModuleRecord
    from .watch import GradWatch

__all__ = ["CUT_CAUSE", "cut_calls", "cut_from_the_graph", "cut_text", "site_text"]


def cut_calls(w: GradWatch) -> list[tuple[ModuleRecord, str]]:
    """The calls of trainable modules whose outputs had no autograd history, each with the
    grad mode it ran in (``"no_grad"``, ``"inference_mode"`` or ``"on"``)."""
    return [(w.modules[i], mode) for i, mode in w.calls.cuts.calls if i < len(w.modules)]


def site_text(w: GradWatch, index: int) -> str:
    """``" (called at model.py:9 (in Encoder.embed) ..., inside @torch.no_grad() on
    Encoder.embed)"``: where call ``index`` ran with recording off, as the stack showed it at
    the call; ``""`` when not noted."""
    site = w.calls.cuts.sites.get(index)
    text = str(site) if site is not None else ""
    return f" ({text})" if text else ""


def cut_from_the_graph(w: GradWatch, o: Options) -> Finding:
    """A module with parameters that require grad produced outputs without autograd history:
    its forward ran under ``torch.no_grad()`` (or its output was detached), so nothing flows
    back through that call."""
    cut = cut_calls(w)
    grad_mode = {c.index: mode for c, mode in cut}
    calls = [c for c, _ in cut]
    # reentrant checkpointing runs a forward without history on purpose and records it again
    # during backward: a module that got a gradient in another call of the step is not cut
    flowed = {c.name for c in w.modules if c.grad_out is not None}
    outer = [c for c in calls if (c.parent is None or c.parent not in grad_mode)
             and c.name not in flowed]
    if not outer:
        return Finding("cut from the graph", True)
    c = outer[0]
    more = f" (and {len(outer) - 1} other call(s))" if len(outer) > 1 else ""
    cause = CUT_CAUSE[grad_mode[c.index]] + site_text(w, c.index)
    # grad mode on around it, off within it: the inner call's mode is the cause
    parents = [m.parent for m in w.modules]
    off = {d.index for d in calls
           if grad_mode[d.index] != "on" and runs_inside(d.index, c.index, parents)}
    inner = [d for d in calls if d.index in off and d.parent not in off]  # outermost first
    if grad_mode[c.index] == "on" and inner:
        cause = (f"its submodule '{inner[0].name}' ({inner[0].kind}) ran without recording "
                 f"a graph: {CUT_CAUSE[grad_mode[inner[0].index]]}"
                 f"{site_text(w, inner[0].index)}")
    text = (f"module '{c.name}' ({c.kind}) produced an output without autograd history "
            f"although its parameters require grad{more}: {cause}; no gradient flows back "
            f"through that call")
    mine = [n for n, r in w.parameters.items() if r.module == c.name or
            r.module.startswith(f"{c.name}.") or c.name == "(model)"]
    if unheld(w, mine):  # no optimizer would train them: a part kept fixed (a note)
        return Finding("cut from the graph", True, note=text + " (no optimizer whose step ran "
                       "holds its parameters)")
    return Finding("cut from the graph", True, text)


def cut_text(w: GradWatch) -> str:
    """``"; module ... produced an output without autograd history ..."``: what
    :func:`cut_from_the_graph` observed, said where no backward pass reached the model (the
    model's output carried no graph: a loss built from it, or from a copy of it made to
    require grad, reaches no parameter); else ``""``."""
    cut = cut_from_the_graph(w, Options())
    return f"; {cut.problem}" if cut.problem else ""


CUT_CAUSE = {
    "no_grad": "it ran with gradients disabled (torch.no_grad() around it)",
    "inference_mode": "it ran under torch.inference_mode(), so its output is an inference "
                      "tensor that can never join a graph",
    "on": "grad mode was on, so its output was detached or its parameters are not used",
    "checkpoint": "it ran inside torch.utils.checkpoint with use_reentrant=True, which runs the "
                  "block without recording a graph and records it again during backward only "
                  "when an input of the checkpoint requires grad; none did (torch warns \"None "
                  "of the inputs have requires_grad=True\"), so backward never reaches the "
                  "block: pass use_reentrant=False, or give the checkpoint an input that "
                  "requires grad",
    "checkpoint-unreached": "it ran inside torch.utils.checkpoint with use_reentrant=True, "
                            "which records the block again during backward only when backward "
                            "reaches the checkpoint's output; it did not",
}
