"""The finding on parameters that got no gradient in the watched step, and what the record
shows of why: modules not called in the step (a head sampled out of this batch, as designed,
or a module the forward skips), custom ``autograd.Function`` nodes whose ``backward`` returned
None on every path to them (:mod:`.noneback`), and what ``DistributedDataParallel`` does with
them.

Imports :mod:`.finding` and :mod:`.holds` of the trace room.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import torch

from .finding import Finding, Options, shown
from .holds import gone

if TYPE_CHECKING:
    from .watch import GradWatch

__all__ = ["no_gradient"]



def no_gradient(w: GradWatch, o: Options) -> Finding:
    left = set(gone(w))  # no longer the model's: named by optimizer_holds
    none = [n for n, r in w.parameters.items() if r.requires_grad and r.grad is None
            and n not in w.grads.replaced and n not in left]  # re-created: named by that
    if none and unheld(w, none):
        return Finding("missing gradients", True, note=(
            f"no gradient for {len(none)} parameter(s), and no optimizer whose step ran holds "
            f"them: {shown(none, 3)}{_why(w, none)}; nothing trains them, as for a part of "
            f"the model kept fixed on purpose (requires_grad_(False) would say so)"),
            expected=tuple(none))
    if none:
        return Finding("missing gradients", True, f"no gradient for {len(none)} parameter(s): "
                       f"{shown(none, 3)}{_why(w, none)}{_ddp_unused(w)}")
    return Finding("missing gradients", True)


def unheld(w: GradWatch, names: list[str]) -> bool:
    """Whether optimizer steps ran in the block and none of them holds any of ``names``."""
    if not w.grads.steps_seen or w.engine is not None:
        return False
    held = {w.watched.owner[p][0] for h in w.grads.optimizers for p in h.held
            if p in w.watched.owner}
    return not held.intersection(names)


def _ddp_unused(w: GradWatch) -> str:
    """What parameters without a gradient do to ``DistributedDataParallel``, said only under
    DDP, and what the final ``.grad`` shows of it once the block has ended."""
    if w.engine != "DDP":
        return ""
    ddp = next(m for m in w.model.modules()
               if isinstance(m, torch.nn.parallel.DistributedDataParallel))
    if getattr(ddp, "find_unused_parameters", False):
        return " (DistributedDataParallel was built with find_unused_parameters=True: it skips them)"
    text = (" (under DistributedDataParallel without find_unused_parameters=True, the next "
            "forward raises \"Expected to have finished reduction in the prior iteration "
            "before starting a new one\": these are the parameters it waits for")
    got = [r for r in w.parameters.values() if r.grad is not None and r.final_known]
    if got and w.world > 1 and all(r.final == r.grad for r in got):
        text += (f"; this step's .grad was not averaged over the {w.world} processes: it "
                 f"equals this process's own gradient")
    return text + ")"


def _why(w: GradWatch, none: list[str]) -> str:
    """What the record shows of why: modules not called in the step, custom Functions that
    returned None for the parameters, a backward() that raised after reaching other
    parameters, its error caught inside the block (each said only when observed)."""
    params, said = w.parameters, []
    # modules ran: recorded on full steps only (a light step's module record is empty)
    idle = sorted({params[n].module for n in none if not params[n].module_ran}
                  if w.detail.full else ())
    if idle:
        said.append(f"module(s) not called in this step: {shown(idle, 3)}; a parameter of a "
                    f"module the forward does not call gets no gradient, as when a head is "
                    f"sampled out of this batch")
    customs = sorted({c.removesuffix("Backward") for n in none
                      for c in w.nones.found.get(n, [])})
    if customs:
        said.append(f"a custom autograd.Function whose backward() returned None lies on every "
                    f"path to {shown([n for n in none if w.nones.found.get(n)], 3)}: "
                    f"{shown(customs, 3)} (why_no_grad names it per parameter)")
    r = w.grads.raised
    if r is not None and r.reached and w.grads.ended is None:
        said.append(f"a backward() call in the block raised {r.kind} after reaching other "
                    f"parameters (observed: the call raised; the error was caught inside the "
                    f"block), and a backward stops at the node that raises: {r.message}")
    return f" ({'; '.join(said)})" if said else ""
