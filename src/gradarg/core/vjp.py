"""What ``y.backward(gradient=v)`` puts in ``x.grad``, and ``v`` contracted with a Jacobian."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import torch

from .._validate import (
    as_input_tuple,
    check_callable,
    check_cotangent,
    check_requires_grad,
    check_single_output,
    check_tensor,
    fresh_leaves,
)
from .buffers import keeps_buffers
from .compose import composable_vjp, inside_transform
from .cuts import watching
from .graph import grad_on, walk_graph

__all__ = ["backward_vjp", "contract"]


@keeps_buffers()
def backward_vjp(fn: Callable[[torch.Tensor], torch.Tensor], x: torch.Tensor, v: Any) -> torch.Tensor:
    """Run ``fn(x).backward(gradient=v)`` on a private leaf copy of ``x`` and return its ``.grad``.

    Parameters
    ----------
    fn : callable
        ``fn(x)`` returns one tensor ``y`` (floating or complex).
    x : torch.Tensor
        Input, floating or complex, any shape. Left untouched (``.grad``, ``requires_grad``, values).
    v : torch.Tensor or number
        Upstream gradient (``grad_outputs``, cotangent), shape ``y.shape``.

    Returns
    -------
    torch.Tensor
        ``x.grad`` after the backward pass: shape ``x.shape``, dtype ``x.dtype``; the
        vector-Jacobian product ``vᵀJ`` (``Tensor.backward`` docs,
        https://pytorch.org/docs/stable/generated/torch.Tensor.backward.html).

    Raises
    ------
    TypeError
        ``x`` or ``v`` is not a tensor, ``x`` is not floating/complex, or ``fn`` returns a tuple
        or a non-tensor.
    ValueError
        ``v.shape != y.shape``, or ``y`` does not require grad (it does not depend on ``x``
        through differentiable operations).

    Notes
    -----
    Inside ``torch.func`` transforms (``grad``, ``vjp``, ``jacrev``, ``jacfwd``, ``hessian``,
    ``jvp``, ``vmap``, at any depth) no private leaf is made (a detached copy would be cut from
    the transforms): the product is ``torch.func.vjp(fn, x)``'s pullback of ``v``, on a
    ``clone()`` of ``x``, so the transforms differentiate and batch it in ``x``, in ``v`` and
    in tensors ``fn`` captures.  The same ``ValueError`` when ``fn``'s output does not depend on
    ``x``; ``fn`` obeys torch.func's rules there (an ``autograd.Function`` needs
    ``setup_context``) and torch's errors propagate.  Outside them, tensors ``fn`` captures
    (a module's parameters) get no gradient: their ``.grad`` is left as it was.

    Examples
    --------
    >>> import torch
    >>> x, v = torch.tensor([1.0, 2.0]), torch.tensor([100.0, 1.0])
    >>> backward_vjp(lambda t: t**2, x, v)
    tensor([200.,   4.])

    Under ``torch.func.grad``: ``d/dx [v * cos(x)]`` with ``v = 1`` is ``-sin(x)``:

    >>> s = torch.tensor(0.5, dtype=torch.float64)
    >>> torch.func.grad(lambda t: backward_vjp(torch.sin, t, 1.0))(s)
    tensor(-0.4794, dtype=torch.float64)
    """
    check_callable("fn", fn)
    (x_,), _ = as_input_tuple("x", x)
    if inside_transform():
        return composable_vjp(fn, x_, v)
    return run_backward(fn, x_, v)[0]


def run_backward(fn: Callable[[torch.Tensor], torch.Tensor], x: torch.Tensor, v: Any):
    """:func:`backward_vjp` for an already checked ``x``: returns ``(x.grad, y)``, ``y`` detached."""
    got, y, _ = run_backward_or_none(fn, x, v)
    if got is None:  # y requires grad through tensors fn captured, but not through x
        raise ValueError(
            "the output of fn does not depend on x (backward() left x.grad empty): it requires "
            "grad only through other tensors, e.g. parameters captured by fn"
        )
    return got, y


def run_backward_or_none(fn: Callable[[torch.Tensor], torch.Tensor], x: torch.Tensor, v: Any):
    """``(x.grad or None, y detached, reaches)``; ``reaches``: ``y``'s graph leads to ``x``.

    ``x.grad`` is ``None`` with ``reaches`` true when a backward in the graph returned ``None``
    for a gradient the output needs (a custom ``autograd.Function`` that dropped it).  Grad
    mode is switched on for the pass, so this works under ``torch.no_grad()`` too.
    """
    (leaf,) = fresh_leaves((x,))
    with grad_on():
        with watching((leaf,), fn):  # a .item() of a tensor depending on x: say so
            out = fn(leaf)
        y = check_single_output(fn, out)
        check_requires_grad(y, "the output of fn")
        # inputs=: accumulate into the private leaf only, not into tensors fn captured
        y.backward(gradient=check_cotangent(v, y), inputs=[leaf])
    reaches = leaf.grad is not None or graph_reaches(y, leaf)
    return leaf.grad, y.detach(), reaches


def graph_reaches(y: torch.Tensor, leaf: torch.Tensor) -> bool:
    """Whether ``leaf`` is a leaf of ``y``'s autograd graph."""
    return any(getattr(node, "variable", None) is leaf for node in walk_graph([y.grad_fn]))


def contract(v: Any, jac: Any) -> torch.Tensor:
    """``vᵀJ``: contract ``v`` with the leading (output) dimensions of a Jacobian.

    Parameters
    ----------
    v : torch.Tensor or numpy.ndarray
        Upstream gradient, shape ``y.shape`` (a sparse ``v`` is densified).
    jac : torch.Tensor or numpy.ndarray
        Jacobian of shape ``y.shape + x.shape`` (as returned by :func:`gradarg.jacobian`), or a
        sparse one: the COO tensor of that shape that :class:`gradarg.SparseJacobian` returns
        by default, or its flat ``m × n`` CSR (``layout=torch.sparse_csr``) with a ``v`` of
        shape ``(m,)``; contracted over its entries without densifying it.

    Returns
    -------
    torch.Tensor
        Shape ``x.shape``: ``sum_i v[i...] * J[i..., j...]``, in the promoted dtype of the two;
        without autograd history, except inside ``torch.func`` transforms, where it is tracked
        by them (``grad`` of it in ``v`` or in ``jac`` is right, not zero).

    Raises
    ------
    TypeError
        ``v`` or ``jac`` is neither a tensor nor an array.
    ValueError
        ``jac.shape`` does not start with ``v.shape``; ``v`` or ``jac`` on the meta device.

    Examples
    --------
    >>> import torch
    >>> J = torch.tensor([[1.0, 3.0], [2.0, 4.0]])
    >>> contract(torch.tensor([1.0, 0.0]), J)
    tensor([1., 3.])
    """
    # detach() would cut the result from torch.func transforms around the call
    keep = inside_transform()
    v_t, j_t = _as_tensor("v", v, keep), _as_tensor("jac", jac, keep)
    if v_t.layout != torch.strided:
        v_t = v_t.to_dense()
    if tuple(j_t.shape[: v_t.dim()]) != tuple(v_t.shape):
        raise ValueError(
            f"jac has shape {tuple(j_t.shape)}, which does not start with v's shape "
            f"{tuple(v_t.shape)}; expected a Jacobian of shape y.shape + x.shape"
        )
    dtype = torch.promote_types(v_t.dtype, j_t.dtype)
    if j_t.layout != torch.strided:
        return _contract_sparse(v_t.to(dtype), j_t)
    return torch.tensordot(v_t.to(dtype), j_t.to(dtype), dims=v_t.dim())


def _contract_sparse(v: torch.Tensor, jac: torch.Tensor) -> torch.Tensor:
    """``vᵀJ`` over the stored entries of a sparse ``jac`` (COO, or CSR/CSC/BSR converted to
    COO): ``out[col(e)] += v[row(e)] · value(e)``, dense, of shape ``jac.shape[v.dim():]``."""
    coo = (jac if jac.layout == torch.sparse_coo else jac.to_sparse_coo()).coalesce()
    k = v.dim()
    index, values = coo.indices(), coo.values().to(v.dtype)
    if values.dim() > 1:  # hybrid tensors: dense trailing dimensions
        raise ValueError(f"jac is a hybrid sparse tensor (dense dimensions "
                         f"{tuple(values.shape[1:])}); expected a COO or CSR Jacobian")
    col_shape = tuple(jac.shape[k:])
    rows = _ravel(index[:k], tuple(jac.shape[:k]))
    cols = _ravel(index[k:], col_shape)
    out = torch.zeros(math.prod(col_shape), dtype=v.dtype, device=v.device)
    out.index_add_(0, cols, v.reshape(-1)[rows] * values)
    return out.reshape(col_shape)


def _ravel(index: torch.Tensor, shape: tuple[int, ...]) -> torch.Tensor:
    """Row-major flat positions of the multi-indices ``index`` (``len(shape) × nnz``)."""
    flat = torch.zeros(index.shape[1], dtype=torch.int64, device=index.device)
    for d, size in enumerate(shape):
        flat = flat * size + index[d]
    return flat


def _as_tensor(name: str, value: Any, keep: bool = False) -> torch.Tensor:
    if isinstance(value, np.ndarray):
        if value.dtype.kind not in "biufc":
            raise TypeError(f"{name} must hold numbers, got an array of dtype {value.dtype}")
        return torch.from_numpy(np.array(value, copy=True))
    t = check_tensor(name, value)
    if t.is_meta:
        raise ValueError(f"{name} is on the meta device, which holds shapes but no values; "
                         f"pass it on a real device")
    return t if keep else t.detach()
