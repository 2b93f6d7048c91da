"""A module output that had autograd history and got no gradient: which calls, and why as far
as was observed (taken by a later module without its history, cut by an integer index, or not
used with its history).  Read from the module records and the cut finders."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .cutcalls import cut_calls
from .finding import Finding, Options
from .intcuts import said

if TYPE_CHECKING:
    from .records import ModuleRecord
    from .watch import GradWatch

__all__ = ["output_unused", "unused_output_calls", "unused_why"]


def unused_output_calls(w: GradWatch) -> list[ModuleRecord]:
    """The calls whose output has history but got no gradient, of modules no call of which
    got one; calls started after the backward (checkpoint recomputations) do not count."""
    flowed = {c.name for c in w.modules if c.grad_out is not None}
    return [c for c in w.modules if c.out_shape is not None and c.grad_out is None
            and c.index not in w.calls.late and c.name not in flowed]


def output_unused(w: GradWatch, o: Options) -> Finding:
    """A module call whose output has autograd history but received no gradient in a step
    whose backward reached the model: nothing on the way to the loss used that output (an
    encoder state not passed on, an output detached after the module).  Calls that started
    after the backward (recomputation by checkpointing) do not count."""
    calls = w.modules
    if w.graph.stopped_at() is not None or w.grads.raised is not None:
        return Finding("outputs used", False,
                       why_not="backward() stopped with an error before reaching every module")
    unused = unused_output_calls(w)
    # an output that only fed calls which got no gradient themselves (their output unused, or
    # cut from the graph) is explained by them: name the last of the chain
    fed = {p for c in [*unused, *(c for c, _ in cut_calls(w))] for p in c.producers}
    unused = [c for c in unused if c.index not in fed]
    names = {c.name for c in unused}
    # the outermost such call
    outer = [c for c in unused if c.parent is None or calls[c.parent].name not in names]
    if not outer:
        return Finding("outputs used", True)
    c = outer[0]
    more = f" (and {len(outer) - 1} other module(s))" if len(outer) > 1 else ""
    got = [n for n, r in w.parameters.items() if r.module == c.name and r.grad]
    through = ""
    if got:
        through = (f"; its parameters still got a gradient ({', '.join(got[:2])}), through "
                   f"another path: a tied or shared weight")
    return Finding("outputs used", True,
                   f"module '{c.name}' ({c.kind}) returned an output with autograd history "
                   f"that received no gradient{more}: {unused_why(w, c)}{through}")


def unused_why(w: GradWatch, c: ModuleRecord) -> str:
    """Why the output of call ``c`` got no gradient, as far as was observed: taken by a later
    module without its history (detached in between), else not used with its history."""
    after = w.calls.detached.get(c.index)
    if after is not None and after < len(w.modules):
        d = w.modules[after]
        return (f"module '{d.name}' ({d.kind}) took that output without its history "
                f"(observed: the same memory, no autograd graph), so it was detached between "
                f"them (.detach() or .data); remove the detach to train '{c.name}'")
    cut = next((k for k in w.cuts.found if c.index in k.calls), None)
    if cut is not None:
        return said(cut, c.name)
    later = [(i, dtype) for i, dtype in w.calls.noted.integer_inputs.items()
             if i > c.index and i < len(w.modules) and i not in w.calls.late
             and w.modules[i].parent == c.parent]
    if later:
        i, dtype = later[0]
        d = w.modules[i]
        return (f"nothing on the way to the loss uses it with its history; module '{d.name}' "
                f"({d.kind}), called after it, took an integer tensor ({dtype}) as input "
                f"(observed): if that was computed from this output (argmax, an index, "
                f".long(), round), integer values carry no gradient, so the path is cut "
                f"there; use a differentiable relaxation (softmax weights) to train "
                f"'{c.name}'")
    return ("nothing on the way to the loss uses it with its history (a returned state not "
            "passed on, or a use of its values without history that no watched module shows)")
