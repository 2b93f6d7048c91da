"""The backward pass itself raises: the cause :func:`gradarg.why_no_grad` reports when a pass
from the output to the tensor stops with an error other than an in-place modification or freed
saved tensors (those are rules of :mod:`.causes`).

What raises is read from the pass, never guessed: torch's own message, and the node the pass was
in (:func:`gradarg.trace_backward` notes it on the error).  A derivative torch does not implement
(``torch.heaviside``, integer-valued operations), a custom ``torch.autograd.Function`` whose
``backward`` raises, returns the wrong number of gradients or a gradient of the wrong shape, and a
tensor hook that raises all stop the user's ``backward()`` the same way, so ``.grad`` is never
filled; so does ``backward()`` without ``gradient=`` on a complex output.  Imports only :mod:`.context`, :mod:`.rules` and the graph's node helpers.
"""

from __future__ import annotations

import re

from ..graph.nodes import is_custom, node_class
from .context import Answer, Cause, Context

__all__ = ["COMPLEX_OUTPUT", "RAISES"]

_AT = re.compile(r"failed in or after node '([^']*)' \(([^)]*)\)")
_NOT_IMPLEMENTED = re.compile(r"derivative for (?:aten::)?([\w.]+) is not implemented")


def _raises(c: Context) -> Answer | None:
    err = c.failure
    if err is None:
        return None
    first = str(err).strip().splitlines()[0] if str(err).strip() else ""
    said = f"{type(err).__name__}: {first}" if first else type(err).__name__
    notes = " ".join(getattr(err, "__notes__", []))
    at = _AT.search(notes)
    name = at.group(2).rsplit("::", 1)[-1] if at else None
    node = next((n for n in c.nodes if at and n.name() == at.group(2)), None)
    head = (f"a backward pass from {c.oname} to {c.xname} raises ({said}), so backward() "
            f"stops there and {c.xname}.grad is never filled")
    missing = _NOT_IMPLEMENTED.search(str(err))
    if missing:
        op = missing.group(1)
        return Answer("backward-raises", (
            f"{head}: torch implements no derivative for {op}; write that step with "
            f"differentiable operations, or wrap it in a custom torch.autograd.Function "
            f"whose backward you define (for a step function, a straight-through estimator: "
            f"x + (step(x) - x).detach())"), op)
    if node is not None and is_custom(node):
        cls = node_class(node)
        if "invalid gradient" in first or "incorrect number of gradients" in first:
            fix = ("its backward must return one gradient per input of forward (None for "
                   "those that need none), each shaped like that input")
        else:
            fix = "the error is raised inside its backward (or a hook on its output)"
        return Answer("backward-raises", f"{head}: in the custom Function {cls}; {fix}", cls)
    where = f" in or after {name}" if name else ""
    return Answer("backward-raises", (
        f"{head}{where}: the error comes from the pass itself (a node's backward, or a "
        f"hook registered on a tensor or module along the path)"), name)


def _complex_output(c: Context) -> Answer | None:
    if c.gradient is not None or not c.output.is_complex():
        return None
    return Answer("backward-raises", (
        f"{c.oname} is complex ({c.output.dtype}): {c.oname}.backward() without gradient= "
        f"raises (RuntimeError: grad can be implicitly created only for real scalar "
        f"outputs), so {c.xname}.grad is never filled; differentiate a real number made from "
        f"it ({c.oname}.abs(), {c.oname}.real, a loss), or pass gradient= (then give it to "
        f"why_no_grad too)"))


COMPLEX_OUTPUT = Cause(("backward-raises",), "", _complex_output)


RAISES = Cause(("backward-raises",),
               'the backward pass raising (``"backward-raises"``: torch\'s error and the node, '
               "a derivative torch does not implement, a custom Function's backward)", _raises)
