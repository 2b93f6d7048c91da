"""``jacobian(fn, x)``: the full Jacobian by reverse mode, forward mode or finite differences."""

from __future__ import annotations

import contextlib
import weakref
from collections.abc import Callable
from typing import Any, Literal

import torch

from . import _routes
from ._validate import Inputs, as_input_tuple
from .finite_diff import fd_partials, jacobian_from_partials

__all__ = ["METHODS", "jacobian"]

Method = Literal["auto", "reverse", "forward", "finite-difference"]
METHODS: tuple[str, ...] = ("auto", "reverse", "forward", "finite-difference")


def jacobian(
    fn: Callable[..., Any],
    x: Inputs,
    *,
    method: Method = "auto",
    vectorize: bool | None = None,
    sparsity: Any = None,
) -> Any:
    r"""Jacobian of ``fn`` at ``x``: ``J[i..., j...] = ∂y[i...] / ∂x[j...]``.

    Parameters
    ----------
    fn : callable
        Called as ``fn(x)``, or ``fn(*x)`` when ``x`` is a tuple. Returns a tensor or a
        tuple of tensors, with floating or complex dtypes.
    x : torch.Tensor or tuple of torch.Tensor
        Point of evaluation: any shape (0-d included), any strides, float32/float64/complex.
        Never modified: ``fn`` receives private copies.
    method : {"auto", "reverse", "forward", "finite-difference"}
        ``"reverse"`` builds the rows from vector-Jacobian products with one-hot upstream
        gradients (``y.backward(gradient=e_i)`` gives row ``i``); ``"forward"`` builds the
        columns from Jacobian-vector products with one-hot tangents; ``"finite-difference"``
        uses central differences (see :mod:`gradarg.finite_diff` for the step and error bound);
        ``"auto"`` picks reverse when there are no more outputs than inputs, else forward
        (it learns the output size from the forward pass it records for reverse mode, and
        remembers a forward choice per function and input shapes/dtypes, so repeated calls
        skip that pass).
    vectorize : bool or None
        ``None`` (default) tries one batched call with ``torch.func.vmap`` and falls back to a
        loop of single products when the function cannot be batched. ``True`` raises
        :class:`~gradarg._routes.VectorizationError` instead of falling back; ``False`` always loops.
        Reverse mode evaluates ``fn`` once, unbatched, and batches only the backward passes (so
        ``.item()`` or data-dependent control flow in ``fn`` is fine there); forward mode
        batches ``fn`` itself.
    sparsity : torch.Tensor or SparseJacobian, optional
        A ``torch.bool`` pattern of shape ``y.shape + x.shape`` (dense, COO or CSR), ``True``
        where ``J`` may be non-zero, or a :class:`~gradarg.SparseJacobian` built from one:
        the Jacobian is then computed by compression, several rows (or columns) per pass,
        and returned as a sparse COO tensor. A tensor pattern is coloured on every call; build
        a :class:`~gradarg.SparseJacobian` once to reuse the colouring. Single tensor ``x``
        and output; ``method`` must be ``"auto"``, ``"reverse"`` or ``"forward"``.

    Returns
    -------
    torch.Tensor or tuple
        Tensor input and output: shape ``y.shape + x.shape``, in ``x``'s dtype (the output's
        dtype if ``x`` is real and ``y`` complex in forward mode). Tuple inputs and/or outputs give
        the nested tuples of :func:`torch.autograd.functional.jacobian`: ``J[k][j]`` is the block
        of output ``k`` with respect to input ``j``.

    Raises
    ------
    TypeError
        ``x`` is not a tensor (or tuple of tensors) or has an integer/bool dtype; ``fn`` returns
        something other than tensors, or an output with an integer/bool dtype.
    ValueError
        Unknown ``method``, or ``method="forward"`` with complex tensors.
    RuntimeWarning
        Issued (not raised) when ``x`` contains NaN or Inf.

    Notes
    -----
    Tensors are flattened row-major, as ``torch.autograd.functional.jacobian`` and
    ``torch.func.jacrev`` do. An output that does not depend on the input gives a zero block.
    For complex tensors the reverse route follows PyTorch's conjugate Wirtinger convention
    (https://pytorch.org/docs/stable/notes/autograd.html#complex-autograd-doc): for a
    holomorphic ``f`` the entries are ``conj(f'(z))``, matching
    ``torch.autograd.functional.jacobian(fn, z, vectorize=True)``; so ``backward(v)`` equals
    ``v`` contracted with this matrix for holomorphic functions.

    Where torch's batching rule for a backward node is known to give wrong results
    (``_routes.WRONG_BATCHED_BACKWARD``: ``cdist`` in torch 2.13), the reverse route loops
    over single backward passes instead of batching them.

    Examples
    --------
    >>> import torch
    >>> x = torch.tensor([1.0, 2.0, 3.0])
    >>> jacobian(lambda t: t**2, x)
    tensor([[2., 0., 0.],
            [0., 4., 0.],
            [0., 0., 6.]])
    >>> M = torch.tensor([[1.0, 2.0], [3.0, 4.0]])
    >>> jacobian(lambda t: t @ M, torch.tensor([[2.0, 1.0]])).shape
    torch.Size([1, 2, 1, 2])
    >>> jacobian(lambda t: t.sum(), x, method="forward")
    tensor([1., 1., 1.])
    """
    if sparsity is not None:
        from .sparse import sparse_jacobian

        return sparse_jacobian(fn, x, sparsity, method=method)
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    xs, in_tuple = as_input_tuple("x", x)
    if method == "forward" and any(t.is_complex() for t in xs):
        raise ValueError(
            "method='forward' does not support complex inputs: forward mode gives f'(z) where "
            "PyTorch's reverse mode gives its conjugate; use method='reverse' or "
            "'finite-difference'"
        )
    xs = tuple(t.detach().clone() for t in xs)  # fn can never reach the caller's tensors
    # What torch.random.fork_rng(devices=[]) does, without its per-call overhead: the draws fn
    # makes (replayed for every evaluation) never advance the caller's generator.
    state = torch.get_rng_state()
    try:
        blocks, out_tuple = _compute(fn, xs, method, vectorize, state)
    finally:
        torch.set_rng_state(state)
    return _package(blocks, in_tuple, out_tuple)


def _compute(
    fn, xs, method: str, vectorize: bool | None, state: torch.Tensor
) -> tuple[_routes.Blocks, bool]:
    """The blocks ``J[k][j]``; ``state`` is the CPU generator's state on entry."""
    if method == "finite-difference":
        dx, dy, out_tuple = fd_partials(fn, xs)
        ys = _shapes_only(dx, xs)
        blocks = [
            [jacobian_from_partials(dx[k][j], dy[k][j], xs[j], ys[k]) for j in range(len(xs))]
            for k in range(len(dx))
        ]
        return blocks, out_tuple
    complex_ = any(t.is_complex() for t in xs)
    if method == "forward":
        return _forward(fn, xs, vectorize, state)
    auto = method == "auto" and not complex_
    if auto and _remembered_forward(fn, xs):
        return _forward(fn, xs, vectorize, state, fallback_to_reverse=True)
    # reverse or auto: one plain forward pass recorded by autograd; auto may switch to forward.
    leaves, outs, out_tuple = _routes.reverse_graph(fn, xs)
    if auto:
        m = sum(y.numel() for y in outs)
        n = sum(x.numel() for x in xs)
        if m > n:
            del leaves, outs  # free the graph before forward mode runs
            _remember_forward(fn, xs)
            torch.set_rng_state(state)
            return _forward(fn, xs, vectorize, state, fallback_to_reverse=True)
    if vectorize is not False:
        try:
            return _routes.reverse_vectorized(leaves, outs), out_tuple
        except _routes._VMAP_ERRORS as err:
            if vectorize:
                raise _routes.VectorizationError(
                    f"the backward pass of fn could not be batched with torch.func.vmap: {err}"
                ) from err
    # the loop reuses the graph recorded above: fn is not evaluated again
    return _routes.reverse_loop_graph(leaves, outs), out_tuple


# auto learns the output size from a forward pass recorded for reverse mode; when forward mode
# wins (more outputs than inputs) that pass is wasted.  The choice affects only speed, never the
# result, so it is remembered per function and input signature (shapes, dtypes): repeated calls,
# as in a loop over data points, go straight to forward mode.  Weak keys: no function is kept
# alive by this table.
_FORWARD_SIGNATURES: weakref.WeakKeyDictionary[Any, set[tuple]] = weakref.WeakKeyDictionary()
_MAX_SIGNATURES = 32


def _signature(xs) -> tuple:
    return tuple((tuple(x.shape), x.dtype) for x in xs)


def _remembered_forward(fn, xs) -> bool:
    try:
        return _signature(xs) in _FORWARD_SIGNATURES.get(fn, ())
    except TypeError:  # fn cannot be weakly referenced (some builtins)
        return False


def _remember_forward(fn, xs) -> None:
    with contextlib.suppress(TypeError):
        seen = _FORWARD_SIGNATURES.setdefault(fn, set())
        if len(seen) >= _MAX_SIGNATURES:
            seen.clear()
        seen.add(_signature(xs))


def _forward(fn, xs, vectorize, state: torch.Tensor, fallback_to_reverse: bool = False):
    if vectorize is not False:
        try:
            return _routes.forward_vectorized(fn, xs)
        except _routes._VMAP_ERRORS as err:
            if vectorize:
                raise _vectorization_error(fn, xs, err) from err
    torch.set_rng_state(state)
    try:
        return _routes.forward_loop(fn, xs)
    except (RuntimeError, NotImplementedError):
        if not fallback_to_reverse:
            raise
    # Some ops have no forward-mode formula; reverse mode still works.
    torch.set_rng_state(state)
    return _routes.reverse_loop(fn, xs)


def _vectorization_error(fn, xs, err: BaseException) -> Exception:
    """``vectorize=True`` and the batched attempt failed: the error to raise.

    One plain call of ``fn`` first, so that a failure of ``fn`` itself (a non-tensor or integer
    output, a bug in ``fn``) surfaces as it is rather than as a :class:`VectorizationError`.
    """
    with torch.no_grad():
        _routes.call(fn, xs)
    return _routes.VectorizationError(f"fn could not be batched with torch.func.vmap: {err}")


def _shapes_only(dx, xs) -> list[torch.Tensor]:
    """Empty stand-ins for the outputs (shape and dtype) recovered from the partials."""
    out = []
    for row in dx:
        lead = row[0].shape[: row[0].dim() - xs[0].dim()]
        out.append(torch.empty(lead, dtype=row[0].dtype))
    return out


def _package(blocks: _routes.Blocks, in_tuple: bool, out_tuple: bool) -> Any:
    # detach: a forward-mode tangent through a captured tensor that requires grad (a module's
    # parameters) is itself in that graph; the Jacobian is a plain tensor whatever the route.
    blocks = [[b.detach() for b in row] for row in blocks]
    rows = [tuple(row) if in_tuple else row[0] for row in blocks]
    return tuple(rows) if out_tuple else rows[0]
