"""One-hot bases and the blocks they become: the bookkeeping every route shares.

A Jacobian is a nested list ``J[k][j]`` of blocks of shape ``ys[k].shape + xs[j].shape``
(:data:`Blocks`).  Reverse mode feeds the rows of an identity matrix as cotangents and
:func:`split_rows` cuts the results into blocks; forward mode feeds them as tangents and
:func:`split_cols` does the same for columns.  The identity of the last sizes used is cached
(:func:`eye_blocks` with ``cached=True``; :func:`clear_basis_cache` frees it).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import torch

__all__ = ["Blocks", "clear_basis_cache", "eye_blocks", "split_cols", "split_rows", "unshared",
           "zeros_like_grad"]

Blocks = list[list[torch.Tensor]]

# The one-hot basis (an identity matrix) of the last sizes used, kept between calls.  Building it
# is a full-size allocation of m x m (reverse) or n x n (forward) values, as large as the
# Jacobian itself; without glibc tunables a fresh allocation of that size is mmapped and every
# page faults on first touch, which for an elementwise function costs more than the backward
# pass.  Bounded: at most _BASIS_ENTRIES identities of at most _BASIS_MAX_BYTES each (64 MiB).
# A backward that writes into its grad_output would write into the cached basis: the version
# counter shows it and the basis is rebuilt; results never share memory with it (unshared).
_BASIS_MAX_BYTES = 32 * 2**20
_BASIS_ENTRIES = 2
_BASIS: dict[tuple[tuple[int, ...], torch.dtype, torch.device], tuple[torch.Tensor, int]] = {}


def _identity(
    total: int, dtype: torch.dtype, device: torch.device, shape: Sequence[int] | None = None
) -> torch.Tensor:
    """``torch.eye(total)`` with its columns shaped as ``shape`` (default ``(total,)``), i.e.
    a tensor of shape ``(total, *shape)``, from the cache when an unmodified one is there.

    The tensor is its own base, not a view: a view as the batched argument of ``vmap`` costs
    about 10-20 us more per call (measured with torch 2.13), a sixth of a 64-element Jacobian.
    """
    full = (total, *(shape if shape is not None else (total,)))
    key = (full, dtype, device)
    hit = _BASIS.pop(key, None)
    if hit is not None and hit[0]._version == hit[1]:
        eye = hit[0]
    else:
        eye = torch.zeros(full, dtype=dtype, device=device)
        if total:
            eye.view(total, total).fill_diagonal_(1)
    small = eye.numel() * eye.element_size() <= _BASIS_MAX_BYTES
    if small and not torch.is_inference_mode_enabled():
        _BASIS[key] = (eye, eye._version)  # most recently used last
        while len(_BASIS) > _BASIS_ENTRIES:
            del _BASIS[next(iter(_BASIS))]
    return eye


def clear_basis_cache() -> None:
    """Free the cached one-hot bases (at most ``_BASIS_ENTRIES`` x ``_BASIS_MAX_BYTES``)."""
    _BASIS.clear()


def unshared(t: torch.Tensor, basis: Sequence[torch.Tensor]) -> torch.Tensor:
    """``t``, or a copy if it shares memory with the cached basis (a backward or a JVP that
    passes its cotangent/tangent through unchanged, e.g. ``clone`` or ``view``).

    A ``__torch_dispatch__`` wrapper subclass (``LoggingTensor``) has no storage of its own
    to compare: it may wrap the basis itself, so it is copied.
    """
    try:
        ptr = t.untyped_storage().data_ptr()
    except RuntimeError:  # "invalid python storage": a wrapper subclass
        return t.clone()
    if any(ptr == b.untyped_storage().data_ptr() for b in basis):
        return t.clone()
    return t


def eye_blocks(
    shapes: Sequence[torch.Size], like: Sequence[torch.Tensor], *, cached: bool = False
) -> list[torch.Tensor]:
    """One-hot basis of the concatenated flat space, split into batched blocks per tensor.

    Block ``k`` has shape ``(total, *shapes[k])``; row ``r`` of the concatenation is the
    ``r``-th standard basis vector.  ``cached=True``: the blocks are views of a cached
    identity matrix (see ``_identity``); the caller must not write into them.
    """
    sizes = [math.prod(s) for s in shapes]
    total = sum(sizes)
    ref = like[0]
    same_kind = all(t.dtype == ref.dtype and t.device == ref.device for t in like)
    if cached and same_kind and len(shapes) == 1:  # the common case: the identity itself
        return [_identity(total, ref.dtype, ref.device, tuple(shapes[0]))]
    if cached and same_kind:
        eye = _identity(total, ref.dtype, ref.device)
        blocks, start = [], 0
        for shape, size in zip(shapes, sizes, strict=True):
            # columns start:start+size, stride 1 along them: a view splits them into shape
            blocks.append(eye[:, start : start + size].view((total, *shape)))
            start += size
        return blocks
    if len(shapes) == 1:  # the common case: one identity matrix
        return [torch.eye(total, dtype=ref.dtype, device=ref.device).view((total, *shapes[0]))]
    blocks, start = [], 0
    for shape, size, ref in zip(shapes, sizes, like, strict=True):
        b = torch.zeros(total, size, dtype=ref.dtype, device=ref.device)
        b[start : start + size].fill_diagonal_(1)
        blocks.append(b.view((total, *shape)))
        start += size
    return blocks


def split_rows(per_input: Sequence[torch.Tensor], out_shapes: Sequence[torch.Size]) -> Blocks:
    """Rows from VJPs: ``per_input[j]`` has shape ``(m, *x_j.shape)``; split ``m`` per output."""
    if len(out_shapes) == 1:
        shape = tuple(out_shapes[0])
        targets = [shape + tuple(g.shape[1:]) for g in per_input]
        # a 1-d output: the rows already have the block's shape (no reshape call)
        pairs = zip(per_input, targets, strict=True)
        return [[g if g.shape == t else g.reshape(t) for g, t in pairs]]
    sizes = [math.prod(s) for s in out_shapes]
    blocks: Blocks = [[] for _ in out_shapes]
    for g in per_input:
        for k, chunk in enumerate(torch.split(g, sizes, dim=0)):
            blocks[k].append(chunk.reshape(tuple(out_shapes[k]) + tuple(g.shape[1:])))
    return blocks


def split_cols(per_output: Sequence[torch.Tensor], in_shapes: Sequence[torch.Size]) -> Blocks:
    """Columns from JVPs: ``per_output[k]`` has shape ``(n, *y_k.shape)``; split ``n`` per input."""
    sizes = [math.prod(s) for s in in_shapes]
    blocks: Blocks = []
    for t in per_output:
        chunks = (t,) if len(in_shapes) == 1 else torch.split(t, sizes, dim=0)
        row = []
        for j, chunk in enumerate(chunks):
            moved = chunk.movedim(0, -1)  # (*y_k.shape, n_j)
            row.append(moved.reshape(tuple(t.shape[1:]) + tuple(in_shapes[j])))
        blocks.append(row)
    return blocks


def zeros_like_grad(x: torch.Tensor, batch: int) -> torch.Tensor:
    return torch.zeros((batch, *x.shape), dtype=x.dtype, device=x.device)
