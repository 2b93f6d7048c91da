"""Losses with no graph behind them, observed at the ``backward()`` call: a term computed from
a gradient that carries no graph, and a loss that is itself a leaf.

``torch.autograd.grad(outputs, inputs)`` returns gradients that are constants unless it is
given ``create_graph=True``
(https://docs.pytorch.org/docs/stable/generated/torch.autograd.grad.html): without it, a
penalty built from them (WGAN-GP's ``(‖∇D‖ - 1)²``, an input-gradient or Jacobian
regulariser) is a number with no path back to the parameters.  Added to a loss that requires
grad, it changes the loss's value and nothing of any gradient, and torch says nothing.

How it is seen.  While a watch listens, ``torch.autograd.grad`` is wrapped
(:func:`gradarg.trace.watching.patches.register_grad_call_hook`).  After a call without
``create_graph``, a ``torch.overrides.TorchFunctionMode`` follows what is computed from its
result until the next ``backward()`` call (or the block's end): a tensor computed from it is
*derived*; a derived single-element tensor that requires no grad, added to or subtracted
from a tensor that requires grad, makes a *graphless term*, and every tensor computed from
that sum holds it.  A ``backward()`` whose loss holds one is recorded (:class:`Term`: where
``grad`` was called and where the term was added, ``file:line``).  A derived tensor of more
than one element (FGSM's ``x + ε·sign(∇x)``, fed to the model again) makes no term: what it
feeds is differentiated as usual.  A ``backward()`` given a loss that is a leaf tensor
requiring grad (``torch.tensor(value, requires_grad=True)`` after a round trip through
``.item()`` or NumPy) is recorded too: no graph at all.

The mode is pushed at the block's first such ``grad`` call, follows nothing from the next
``backward()`` call to the next such ``grad`` call, and is popped when the block ends if it is
then the innermost function mode; else it stays on the stack, passing every call on, and the
user's mode above it is left first (see :func:`.fnmodes.pop`).  Not seen: ``grad``
imported by name before the block (``from torch.autograd import grad``),
``torch.func.grad``, a term made inside a compiled function.

Also seen at those ``grad`` calls: the first that raised (its error and line, in
:attr:`GraphlessTerms.grad_errors`: the error may have been caught inside the block); a
derivative asked for with ``create_graph=True`` (to be differentiated again: a
physics-informed residual, a curvature penalty) that is exactly zero everywhere
(:class:`ZeroDerivative`), with the piecewise-linear operations (ReLU) of its graph; and the
leaf tensors each such derivative's graph reaches (:attr:`GraphlessTerms.derivative_leaves`):
a parameter outside them shifts what was differentiated by a constant no derivative sees.

Imports :mod:`gradarg.trace.watching.patches`, :mod:`.fnmodes` (the mode's push and pop),
:mod:`.sites` (whose frames are the user's) and
:func:`gradarg.trace.graph.nodes.first_nodes` only.
"""

from __future__ import annotations

import sys
import weakref
from dataclasses import dataclass
from types import FrameType
from typing import Any

import torch

from ..graph.nodes import first_nodes
from . import fnmodes, patches
from .sites import user_site, users_file

__all__ = ["GraphlessTerms", "Term", "ZeroDerivative"]

_ADD = {torch.add, torch.sub, torch.subtract, torch.Tensor.add, torch.Tensor.sub,
        torch.Tensor.subtract, torch.Tensor.__add__, torch.Tensor.__radd__,
        torch.Tensor.__sub__, torch.Tensor.__rsub__, torch.Tensor.__iadd__,
        torch.Tensor.__isub__, torch.Tensor.add_, torch.Tensor.sub_}


@dataclass(frozen=True)
class Term:
    """A ``backward()`` whose loss held a term computed from ``torch.autograd.grad``'s result
    without ``create_graph=True``: ``grad_at`` and ``added_at`` are ``file:line`` of the user's
    code (``""`` where not found)."""

    grad_at: str
    added_at: str


@dataclass(frozen=True)
class ZeroDerivative:
    """A ``torch.autograd.grad(..., create_graph=True)`` call of the user's whose result was
    exactly zero everywhere: ``site`` (``file:line``), the result's ``shape`` and the
    piecewise-linear operations its graph holds (``ReluBackward0``...: derivatives of order
    two and more of those are 0 everywhere)."""

    site: str
    shape: tuple[int, ...]
    linear_ops: tuple[str, ...]


# nodes of piecewise-linear functions (and of their first derivatives): a derivative taken
# through them once more is 0 wherever it exists
_PIECEWISE = ("ReluBackward0", "ThresholdBackward0", "ThresholdBackwardBackward0",
              "LeakyReluBackward0", "LeakyReluBackwardBackward0", "HardtanhBackward0",
              "HardtanhBackwardBackward0", "Relu6Backward0", "AbsBackward0", "ClampBackward1",
              "ClampMinBackward0", "MaximumBackward0", "MinimumBackward0")


def _piecewise_ops(t: torch.Tensor, limit: int = 2000) -> tuple[str, ...]:
    """The piecewise-linear operations in ``t``'s graph (its first ``limit`` nodes)."""
    names = (type(n).__name__ for n in first_nodes([t.grad_fn], limit))
    return tuple(dict.fromkeys(n for n in names if n in _PIECEWISE))


def _leaves(result: Any, limit: int = 4096) -> frozenset[int] | None:
    """The ``id`` of every leaf tensor (``AccumulateGrad``'s variable) the graph of
    ``result`` (a ``create_graph=True`` derivative) reaches; ``None`` where the graph has more
    than ``limit`` nodes (not walked to its end: nothing can be said of what it misses)."""
    ts = result if isinstance(result, (list, tuple)) else (result,)
    roots = [t.grad_fn for t in ts if isinstance(t, torch.Tensor) and t.grad_fn is not None]
    nodes = first_nodes(roots, limit + 1)
    if len(nodes) > limit:
        return None
    return frozenset(id(n.variable) for n in nodes if hasattr(n, "variable"))


def _called_by_user() -> bool:
    """Whether the ``torch.autograd.grad`` call being reported was made by the user's code
    (not by torch or gradarg): the frame that called the wrapper in ``patches``."""
    frame: FrameType | None = sys._getframe(1)
    while frame is not None and frame.f_code.co_filename != patches.__file__:
        frame = frame.f_back  # up to patches' wrapper, then its caller
    while frame is not None and frame.f_code.co_filename == patches.__file__:
        frame = frame.f_back
    return frame is not None and users_file(frame.f_code.co_filename)


class _Marks:
    """Tensors marked with a value, by identity, forgotten when the tensor is freed."""

    def __init__(self) -> None:
        self._by_id: dict[int, tuple[weakref.ref, Any]] = {}

    def get(self, t: torch.Tensor) -> Any:
        entry = self._by_id.get(id(t))
        return entry[1] if entry is not None and entry[0]() is t else None

    def put(self, t: torch.Tensor, value: Any) -> None:
        key = id(t)

        def forget(_ref: weakref.ref) -> None:
            self._by_id.pop(key, None)

        self._by_id[key] = (weakref.ref(t, forget), value)

    def clear(self) -> None:
        self._by_id.clear()


class GraphlessTerms:
    """Listens for ``torch.autograd.grad`` calls without ``create_graph`` and records each
    ``backward()`` whose loss holds a term computed from their result (:attr:`found`), and
    each ``backward()`` given a loss that is itself a leaf tensor requiring grad
    (:attr:`leaf_losses`: a loss made anew from a number or an array, no graph behind it)."""

    def __init__(self) -> None:
        self.found: list[Term] = []
        self.leaf_losses: list[str] = []  # where backward() was given a leaf (no graph)
        self.zero_derivatives: list[ZeroDerivative] = []  # create_graph results all zero
        # create_graph calls: (the user's line, ids of the leaves their result's graph reaches);
        # only calls whose graph was walked to its end
        self.derivative_leaves: list[tuple[str, frozenset[int]]] = []
        # the first grad call that raised: its error's kind and first line, and the user's line
        self.grad_errors: list[tuple[str, str, str]] = []
        self._derived = _Marks()   # tensor -> where grad was called
        self._terms = _Marks()     # tensor -> Term
        self._mode: fnmodes.Following | None = None
        self._handles: list[Any] = []

    def attach(self) -> None:
        self._handles = [patches.register_grad_call_hook(self._on_grad),
                         patches.register_grad_error_hook(self._on_grad_error),
                         patches.register_backward_call_hook(self._on_backward)]

    def detach(self) -> list[Any]:
        """Stop following; the hooks' handles, for the owner to remove."""
        self.stop()
        handles, self._handles = self._handles, []
        return handles

    # -- events -----------------------------------------------------------------------------
    def _on_grad(self, create_graph: bool, result: Any) -> None:
        if not _called_by_user():
            return
        site = user_site()
        if isinstance(result, dict):
            result = list(result.values())
        if create_graph:  # a derivative to differentiate again: is it zero everywhere?
            if not self.zero_derivatives:
                self._zero(result, site)
            if len(self.derivative_leaves) < 4 and (leaves := _leaves(result)) is not None:
                self.derivative_leaves.append((site, leaves))
            return
        for t in result if isinstance(result, (list, tuple)) else (result,):
            if isinstance(t, torch.Tensor):
                self._derived.put(t, site)
        if self._mode is None:
            self._mode = fnmodes.push(self._seen)
        self._mode.on = True

    def _on_grad_error(self, error: BaseException) -> None:
        if not self.grad_errors and _called_by_user():
            first = (str(error).strip().splitlines() or [""])[0]
            self.grad_errors.append((type(error).__name__, first, user_site()))

    def _zero(self, result: Any, site: str) -> None:
        for t in result if isinstance(result, (list, tuple)) else (result,):
            if (isinstance(t, torch.Tensor) and t.grad_fn is not None and t.numel()
                    and t.is_floating_point() and not bool(t.any())):
                self.zero_derivatives.append(ZeroDerivative(site, tuple(t.shape),
                                                            _piecewise_ops(t)))
                return

    def _on_backward(self, tensors: Any) -> None:
        losses = tensors if isinstance(tensors, (list, tuple)) else (tensors,)
        for loss in losses:
            if isinstance(loss, torch.Tensor) and loss.grad_fn is None and loss.requires_grad:
                self.leaf_losses.append(user_site())
        if self._mode is None:
            return
        for loss in losses:
            term = self._terms.get(loss) if isinstance(loss, torch.Tensor) else None
            if term is not None and term not in self.found:
                self.found.append(term)
        # off until the next grad call: it cannot be popped here, where a backward() made
        # as a Tensor method runs inside the mode's own handler (torch takes the mode off the
        # stack while its handler runs)
        self._mode.on = False
        self._derived.clear()
        self._terms.clear()

    def _seen(self, func: Any, args: Any, kwargs: Any, out: Any) -> None:
        self.follow(func, fnmodes.tensors_in(args, kwargs), out)

    def follow(self, func: Any, inputs: list[torch.Tensor], out: Any) -> None:
        """Mark what ``func`` computed from ``inputs`` (called by the mode after each call)."""
        term = next((m for m in map(self._terms.get, inputs) if m is not None), None)
        grad_at = next((m for m in map(self._derived.get, inputs) if m is not None), None)
        if term is None and grad_at is not None and func in _ADD:
            constant = any(self._derived.get(t) is not None and not t.requires_grad
                           and t.numel() == 1 for t in inputs)
            # added to a loss (a tensor with history), not to a parameter (a leaf: the fast
            # weights p - lr * g of first-order meta-learning are an update, not a term)
            if constant and any(t.requires_grad and t.grad_fn is not None for t in inputs):
                term = Term(grad_at, user_site())
        if term is None and grad_at is None:
            return
        for t in out if isinstance(out, (list, tuple)) else (out,):
            if isinstance(t, torch.Tensor):
                if term is not None:
                    self._terms.put(t, term)
                if grad_at is not None:
                    self._derived.put(t, grad_at)

    def stop(self) -> None:
        """Pop the mode if it is the innermost function mode; else leave it on the stack
        (its marks dropped, it only passes calls on) for the user's mode above it to be left
        first (:func:`.fnmodes.pop`)."""
        mode, self._mode = self._mode, None
        self._derived.clear()
        self._terms.clear()
        if mode is not None:
            fnmodes.pop(mode, leave=True)
