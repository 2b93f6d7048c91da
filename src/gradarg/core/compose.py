"""Inside ``torch.func`` transforms: whether a call is inside one, and the routes that compose.

The fast routes of :func:`gradarg.jacobian` and :func:`gradarg.backward_vjp` record a private
autograd graph on detached copies of the inputs (``detach().requires_grad_()``).  Inside a
``torch.func`` transform (``grad``, ``vjp``, ``jacrev``, ``jacfwd``, ``hessian``, ``jvp``,
``vmap``) a detached copy is cut from the transform: the derivative would be right but constant
to every outer transform, so ``grad`` of it would be silently zero.  Here, instead, every step
is a ``torch.func`` call on the inputs as given (``vjp`` and ``vmap`` for rows, ``jvp`` and
``vmap`` for columns, differences evaluated on the inputs themselves), which the outer
transforms differentiate and batch like any other function.

:func:`inside_transform` tells the two cases apart through public behaviour: torch refuses
``Tensor.requires_grad_()`` inside every ``torch.func`` transform (the refusal
``torch.autograd.functional.jacobian`` runs into there), also on a tensor that already requires
grad, which outside transforms is a no-op of about 0.1 us.  :func:`transform_name` names the
innermost transform for an error message by reading torch's private interpreter stack
(``torch._C._functorch.peek_interpreter_stack``) when it can: a message only, nothing computed
depends on it, and where that piece has moved the message lists the transforms instead.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextvars import ContextVar
from typing import Any

import torch
from torch.func import jvp, vjp, vmap

from .._validate import check_cotangent, check_single_output
from .basis import Blocks, eye_blocks, split_cols, split_rows, zeros_like_grad
from .choose import check_jacobian_memory
from .finite_diff import fd_partials, jacobian_from_partials
from .functorch import VMAP_ERRORS, VectorizationError
from .graph import call, refuse_complex_of_real, refusing_complex_of_real

__all__ = ["BATCH", "composable_blocks", "composable_vjp", "inside_transform", "transform_name"]

# A 0-element leaf that requires grad: requires_grad_() on it changes nothing, except that torch
# refuses the call inside a torch.func transform.
_PROBE = torch.empty(0, requires_grad=True)

# The product of the batch sizes of the jacobian(..., batch_dim=) calls around this one: the
# memory a Jacobian takes under their vmap is that many times its own (a contextvar: per thread).
BATCH: ContextVar[int] = ContextVar("gradarg_batch", default=1)

_GENERIC = "a torch.func transform (grad, vjp, jacrev, jacfwd, hessian, jvp or vmap)"


def inside_transform() -> bool:
    """Whether this call runs inside a ``torch.func`` transform (``grad``, ``vjp``, ``jacrev``,
    ``jacfwd``, ``hessian``, ``jvp``, ``vmap``, ``functionalize``), at any depth.

    Examples
    --------
    >>> import torch
    >>> inside_transform()
    False
    >>> torch.func.vmap(lambda t: torch.tensor(inside_transform()))(torch.zeros(2))
    tensor([True, True])
    """
    try:
        _PROBE.requires_grad_(True)
    except RuntimeError:
        return True
    return False


def transform_name() -> str:
    """The innermost active transform, for a message: ``"torch.func.vmap"``, or the transforms
    that share a kind (``grad``, ``vjp``, ``jacrev`` are one reverse-mode level to torch)."""
    try:
        from torch._C._functorch import TransformType, peek_interpreter_stack

        level = peek_interpreter_stack()
        if level is None:
            return _GENERIC
        return {
            TransformType.Grad: "torch.func.grad (or vjp, jacrev, hessian: a reverse-mode "
                                "transform)",
            TransformType.Jvp: "torch.func.jvp (or jacfwd, hessian: a forward-mode transform)",
            TransformType.Vmap: "torch.func.vmap",
            TransformType.Functionalize: "torch.func.functionalize",
        }.get(level.key(), _GENERIC)
    except (ImportError, AttributeError, RuntimeError):
        return _GENERIC


def composable_blocks(
    fn: Callable[..., Any], xs: tuple[torch.Tensor, ...], method: str, vectorize: bool | None
) -> tuple[Blocks, bool]:
    """The blocks ``J[k][j]`` by ``torch.func`` alone, so that the transforms around compose.

    ``method``: ``"auto"`` and ``"reverse"`` take rows (:func:`_rows`), ``"forward"`` columns
    (:func:`_columns`), ``"finite-difference"`` central differences evaluated on ``xs`` as given
    (their derivative through a transform is the same difference quotient of ``fn``'s
    derivative).  ``xs`` must be private copies (``clone()``: it keeps the transforms' tracking).
    """
    if method == "finite-difference":
        n = sum(x.numel() for x in xs)
        _check_memory(3 * n, n, xs, "the finite differences' shifted inputs")
        dx, dy, out_tuple = fd_partials(refusing_complex_of_real(fn, xs), xs, detach=False)
        # dx[k][j] has output k's dtype: it stands in for y_k (only its dtype is read)
        blocks = [[jacobian_from_partials(dx[k][j], dy[k][j], xs[j], dx[k][j])
                   for j in range(len(xs))] for k in range(len(dx))]
        return blocks, out_tuple
    if sum(x.numel() for x in xs) == 0:
        # no column: one call gives the output shapes (vmap refuses a batch of size 0)
        outs, out_tuple = call(fn, xs)
        refuse_complex_of_real([y.dtype for y in outs], xs, fn)
        return [[torch.zeros((*y.shape, *x.shape), dtype=y.dtype, device=y.device)
                 for x in xs] for y in outs], out_tuple
    if method == "forward":
        return _columns(fn, xs, vectorize)  # complex of real: the complex derivative
    return _rows(fn, xs, vectorize)


def _flat(fn: Callable[..., Any], is_tuple: list[bool]) -> Callable[..., tuple[torch.Tensor, ...]]:
    def flat(*args: torch.Tensor) -> tuple[torch.Tensor, ...]:
        outs, tup = call(fn, args)
        is_tuple.append(tup)
        return outs

    return flat


def _batched_or_loop(f: Callable[..., Any], basis: Sequence[torch.Tensor], vectorize: bool | None,
                     what: str, **vmap_kw: Any) -> tuple[torch.Tensor, ...]:
    """``vmap(f)(*basis)`` as a tuple; ``vectorize=False``, or a failed attempt with
    ``vectorize=None``, loops over the basis instead (``vectorize=True`` raises)."""
    if vectorize is not False:
        try:
            out = vmap(f, **vmap_kw)(*basis)
            return (out,) if isinstance(out, torch.Tensor) else tuple(out)
        except VMAP_ERRORS as err:
            if vectorize:
                raise VectorizationError(
                    f"{what} could not be batched with torch.func.vmap: {err}") from err
    per = [f(*(b[r] for b in basis)) for r in range(basis[0].shape[0])]
    per = [(p,) if isinstance(p, torch.Tensor) else tuple(p) for p in per]
    return tuple(torch.stack(col) for col in zip(*per, strict=True))


def _rows(fn: Callable[..., Any], xs: tuple[torch.Tensor, ...],
          vectorize: bool | None) -> tuple[Blocks, bool]:
    """Reverse mode: row ``i`` is ``torch.func.vjp``'s pullback of the one-hot ``e_i``
    (``torch.func.jacrev`` without its refusal of complex tensors: PyTorch's conjugate
    convention, as the reverse route outside transforms)."""
    is_tuple: list[bool] = []
    found = vjp(_flat(fn, is_tuple), *xs)
    outs, pullback = found[0], found[1]  # (no has_aux: two values)
    refuse_complex_of_real([y.dtype for y in outs], xs, fn)
    shapes = [y.shape for y in outs]
    m = sum(y.numel() for y in outs)
    _check_memory(m, m + sum(x.numel() for x in xs), (*xs, *outs),
                  "the one-hot cotangents and the rows of the Jacobian")
    if m == 0:
        return split_rows([zeros_like_grad(x, 0) for x in xs], shapes), is_tuple[0]
    cot = eye_blocks(shapes, outs)
    per_input = _batched_or_loop(lambda *c: pullback(c), cot, vectorize, "the backward pass of fn")
    return split_rows(per_input, shapes), is_tuple[0]


def _columns(fn: Callable[..., Any], xs: tuple[torch.Tensor, ...],
             vectorize: bool | None) -> tuple[Blocks, bool]:
    """Forward mode: column ``j`` is ``torch.func.jvp`` with the one-hot tangent ``e_j``
    (``torch.func.jacfwd``; the same random draws for every column, as outside transforms)."""
    is_tuple: list[bool] = []
    flat = _flat(fn, is_tuple)
    n = sum(x.numel() for x in xs)
    _check_memory(n, n, xs, "forward mode's one-hot tangents")
    tangents = eye_blocks([x.shape for x in xs], xs)
    per_output = _batched_or_loop(lambda *t: jvp(flat, xs, t)[1], tangents, vectorize, "fn",
                                  randomness="same")
    return split_cols(per_output, [x.shape for x in xs]), is_tuple[-1]


def _check_memory(rows: int, cols: int, tensors: Sequence[torch.Tensor], what: str) -> None:
    batch = BATCH.get()
    more = f", {batch} samples of batch_dim= together" if batch > 1 else ""
    check_jacobian_memory(batch * rows, cols, max(t.element_size() for t in tensors), what, more)


def composable_vjp(fn: Callable[[torch.Tensor], torch.Tensor], x: torch.Tensor,
                   v: Any) -> torch.Tensor:
    """:func:`gradarg.backward_vjp` by ``torch.func.vjp`` on a ``clone()`` of ``x``: the same
    value, and the same ``ValueError`` when ``fn``'s output does not depend on ``x``."""
    reached: list[bool] = []

    def single(t: torch.Tensor) -> torch.Tensor:
        y = check_single_output(fn, fn(t))
        # inside vjp, the output requires grad at this level only through x
        reached.append(y.requires_grad)
        return y

    found = vjp(single, x.clone())
    y, pullback = found[0], found[1]  # (no has_aux: two values)
    if not reached[0]:
        raise ValueError(
            "the output of fn does not depend on x through differentiable operations, so "
            "backward() has nothing to differentiate (detach(), integer ops, torch.no_grad() or "
            "argmax-like ops cut the graph)"
        )
    check_cotangent(v, y)  # the checks only: its result is detached, which a transform would cut
    cot = torch.as_tensor(v, dtype=y.dtype) if not isinstance(v, torch.Tensor) else v.to(y.dtype)
    (grad,) = pullback(cot)
    return grad
