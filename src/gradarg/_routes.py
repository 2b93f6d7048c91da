"""The two autodiff routes to a Jacobian: reverse (rows from VJPs) and forward (columns from JVPs).

Everything here works on flat bookkeeping: ``xs`` is a tuple of input tensors, the
function returns a tuple of output tensors, and a Jacobian is a nested list
``J[k][j]`` of blocks of shape ``ys[k].shape + xs[j].shape``.  ``jacobian.py``
turns that into the structure the caller asked for.

Each route first tries one vectorized call (``torch.func.vmap`` over a batch of one-hot
cotangents or tangents, which is what ``torch.func.jacrev``/``jacfwd`` do), and falls back
to a Python loop of single VJPs/JVPs when the function cannot be batched (``.item()``,
data-dependent control flow, in-place writes into captured buffers, ops without batching
rules).  Random draws are handled by replaying the same RNG state for every evaluation.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import torch
import torch.autograd.forward_ad as fwAD
from torch.func import jvp as func_jvp
from torch.func import vjp as func_vjp
from torch.func import vmap

from ._validate import as_output_tuple

Blocks = list[list[torch.Tensor]]

# What a failed vectorized attempt may raise; anything else is the caller's bug and propagates.
_VMAP_ERRORS = (RuntimeError, NotImplementedError, ValueError, TypeError, UserWarning)


class VectorizationError(RuntimeError):
    """Raised when ``vectorize=True`` was requested but the function cannot be batched."""


def call(fn: Callable[..., Any], xs: Sequence[torch.Tensor]) -> tuple[tuple[torch.Tensor, ...], bool]:
    """Evaluate ``fn(*xs)`` and check its outputs (tensors with differentiable dtypes)."""
    outs, is_tuple = as_output_tuple(fn, fn(*xs))
    name = getattr(fn, "__name__", "fn")
    for k, yk in enumerate(outs):
        if not (yk.is_floating_point() or yk.is_complex()):
            label = f"output {k} of {name}" if is_tuple else f"the output of {name}"
            raise TypeError(
                f"{label} has dtype {yk.dtype}, which is not differentiable; expected a floating "
                f"or complex output (integer and bool results such as argmax or comparisons "
                f"have no Jacobian)"
            )
    return outs, is_tuple


def eye_blocks(shapes: Sequence[torch.Size], like: Sequence[torch.Tensor]) -> list[torch.Tensor]:
    """One-hot basis of the concatenated flat space, split into batched blocks per tensor.

    Block ``k`` has shape ``(total, *shapes[k])``; row ``r`` of the concatenation is the
    ``r``-th standard basis vector.
    """
    sizes = [math.prod(s) for s in shapes]
    total = sum(sizes)
    blocks, start = [], 0
    for shape, size, ref in zip(shapes, sizes, like, strict=True):
        b = torch.zeros(total, size, dtype=ref.dtype, device=ref.device)
        b[start : start + size].fill_diagonal_(1)
        blocks.append(b.view((total, *shape)))
        start += size
    return blocks


def _split_rows(
    per_input: Sequence[torch.Tensor], out_shapes: Sequence[torch.Size]
) -> Blocks:
    """Rows from VJPs: ``per_input[j]`` has shape ``(m, *x_j.shape)``; split ``m`` per output."""
    sizes = [math.prod(s) for s in out_shapes]
    blocks: Blocks = [[] for _ in out_shapes]
    for g in per_input:
        for k, chunk in enumerate(torch.split(g, sizes, dim=0)):
            blocks[k].append(chunk.reshape(tuple(out_shapes[k]) + tuple(g.shape[1:])))
    return blocks


def _split_cols(
    per_output: Sequence[torch.Tensor], in_shapes: Sequence[torch.Size]
) -> Blocks:
    """Columns from JVPs: ``per_output[k]`` has shape ``(n, *y_k.shape)``; split ``n`` per input."""
    sizes = [math.prod(s) for s in in_shapes]
    blocks: Blocks = []
    for t in per_output:
        row = []
        for j, chunk in enumerate(torch.split(t, sizes, dim=0)):
            moved = chunk.movedim(0, -1)  # (*y_k.shape, n_j)
            row.append(moved.reshape(tuple(t.shape[1:]) + tuple(in_shapes[j])))
        blocks.append(row)
    return blocks


def _zeros_like_grad(x: torch.Tensor, batch: int) -> torch.Tensor:
    return torch.zeros((batch, *x.shape), dtype=x.dtype, device=x.device)


# --------------------------------------------------------------------------- reverse mode


def reverse_prepare(fn: Callable[..., Any], xs: tuple[torch.Tensor, ...]):
    """Run the forward pass once for reverse mode; return outputs, structure flag and a VJP."""
    out_holder: dict[str, Any] = {}

    def flat_fn(*args: torch.Tensor) -> tuple[torch.Tensor, ...]:
        outs, is_tuple = call(fn, args)
        out_holder["is_tuple"] = is_tuple
        return outs

    outs, vjp_fn = func_vjp(flat_fn, *xs)
    return outs, out_holder["is_tuple"], vjp_fn


def reverse_vectorized(vjp_fn, outs: tuple[torch.Tensor, ...], xs) -> Blocks:
    """All rows in one batched call: ``vmap`` over one-hot cotangents (as ``torch.func.jacrev``)."""
    shapes = [y.shape for y in outs]
    cot = eye_blocks(shapes, outs)
    grads = vmap(vjp_fn)(tuple(cot))
    return _split_rows(grads, shapes)


def reverse_loop(fn: Callable[..., Any], xs: tuple[torch.Tensor, ...]) -> tuple[Blocks, bool]:
    """One backward pass per output element, each with a one-hot ``gradient``.

    This is literally what the site teaches: ``y.backward(gradient=e_i)`` puts row ``i`` of the
    Jacobian in ``x.grad``; ``torch.autograd.grad`` computes the same without accumulating.
    """
    leaves = tuple(x.detach().requires_grad_(True) for x in xs)
    with torch.enable_grad():
        outs, is_tuple = call(fn, leaves)
    shapes = [y.shape for y in outs]
    m = sum(y.numel() for y in outs)
    live = [k for k, y in enumerate(outs) if y.requires_grad]
    per_input = [_zeros_like_grad(x, m) for x in leaves]
    if live:
        cot = eye_blocks(shapes, outs)
        for r in range(m):
            grads = torch.autograd.grad(
                [outs[k] for k in live],
                leaves,
                grad_outputs=[cot[k][r] for k in live],
                retain_graph=r < m - 1,
                allow_unused=True,
                materialize_grads=True,
            )
            for j, g in enumerate(grads):
                per_input[j][r] = g
    return _split_rows(per_input, shapes), is_tuple


def reverse_batched_autograd(fn: Callable[..., Any], xs) -> tuple[Blocks, bool]:
    """All rows at once with ``torch.autograd.grad(..., is_grads_batched=True)``.

    Used for complex tensors, which ``torch.func.vjp`` refuses.
    """
    leaves = tuple(x.detach().requires_grad_(True) for x in xs)
    with torch.enable_grad():
        outs, is_tuple = call(fn, leaves)
    shapes = [y.shape for y in outs]
    m = sum(y.numel() for y in outs)
    live = [k for k, y in enumerate(outs) if y.requires_grad]
    if not live:
        return _split_rows([_zeros_like_grad(x, m) for x in leaves], shapes), is_tuple
    cot = eye_blocks(shapes, outs)
    grads = torch.autograd.grad(
        [outs[k] for k in live],
        leaves,
        grad_outputs=[cot[k] for k in live],
        is_grads_batched=True,
        allow_unused=True,
        materialize_grads=True,
    )
    return _split_rows(grads, shapes), is_tuple


# --------------------------------------------------------------------------- forward mode


def forward_vectorized(fn: Callable[..., Any], xs: tuple[torch.Tensor, ...]) -> tuple[Blocks, bool]:
    """All columns in one batched call: ``vmap`` over one-hot tangents (as ``torch.func.jacfwd``)."""
    holder: dict[str, Any] = {}

    def flat_fn(*args: torch.Tensor) -> tuple[torch.Tensor, ...]:
        outs, is_tuple = call(fn, args)
        holder["is_tuple"] = is_tuple
        holder["shapes"] = [y.shape for y in outs]
        return outs

    tangents = eye_blocks([x.shape for x in xs], xs)

    def push(*t: torch.Tensor) -> tuple[torch.Tensor, ...]:
        return func_jvp(flat_fn, xs, t)[1]

    cols = vmap(push, randomness="same")(*tangents)
    return _split_cols(cols, [x.shape for x in xs]), holder["is_tuple"]


def forward_loop(fn: Callable[..., Any], xs: tuple[torch.Tensor, ...]) -> tuple[Blocks, bool]:
    """One JVP per input element with ``torch.autograd.forward_ad`` dual tensors."""
    n = sum(x.numel() for x in xs)
    tangents = eye_blocks([x.shape for x in xs], xs)
    state = torch.get_rng_state()
    cols: list[torch.Tensor] | None = None
    is_tuple = False
    for c in range(n):
        torch.set_rng_state(state)
        with fwAD.dual_level():
            duals = tuple(fwAD.make_dual(x.detach(), t[c]) for x, t in zip(xs, tangents, strict=True))
            outs, is_tuple = call(fn, duals)
            if cols is None:
                cols = [torch.zeros((n, *y.shape), dtype=y.dtype, device=y.device) for y in outs]
            for k, y in enumerate(outs):
                tangent = fwAD.unpack_dual(y).tangent
                if tangent is not None:
                    cols[k][c] = tangent
    assert cols is not None
    return _split_cols(cols, [x.shape for x in xs]), is_tuple
