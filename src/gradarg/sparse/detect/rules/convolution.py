"""Convolutions in any number of dimensions, transposed ones included."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np
import torch

from ..registry import (
    bind,
    name,
    refusal,
    register,
)
from ..sets import Dep, UnsupportedOpError, group, take, union

if TYPE_CHECKING:
    from ..mode import Tracer

aten = torch.ops.aten

from .products import mask


@register("convolution", family="convolution")
def convolution(tr: Tracer, func, args, kwargs, outs) -> list[Dep | None]:
    """Convolutions in any number of spatial dimensions, transposed ones included (the
    transpose of the convolution from the output's space to the input's, same weight)."""
    o = outs[0]
    b = bind(func, args, kwargs)
    x, w, bias = b["input"], b["weight"], b["bias"]
    # one value for every spatial dimension (aten accepts a single one for all: stride=2 with
    # padding='valid' reaches here as [2], [0], [1])
    spatial = x.dim() - 2
    stride, padding, dilation = (
        [int(v) for v in b[k]] * (spatial if len(b[k]) == 1 else 1)
        for k in ("stride", "padding", "dilation"))
    groups = int(b["groups"])
    nb, o_ch = o.shape[0], o.shape[1]
    L = math.prod(o.shape[2:])
    m = o.numel()
    parts = []
    dx, dw = tr.dep(x), tr.dep(w)
    if b["transposed"]:
        if dw is not None or tr.is_tainted(w):
            raise refusal(func, " (transposed) with a weight computed from x")
        if dx is not None:
            # x = A y for the ordinary convolution A of y's shape with the same weight
            x_rows, y_rows, shape = conv_pairs(tr, 
                tuple(o.shape), w, stride, padding, dilation, groups
            )
            if shape != tuple(x.shape):
                # output_padding: the convolution of y's shape can reach past x's end; those
                # positions are not in x (nothing of x reaches y through them)
                if len(shape) != x.dim() or any(a < b_ for a, b_ in zip(shape, x.shape,
                                                                         strict=True)):
                    raise UnsupportedOpError(f"{name(func)}: unexpected shapes {shape}")
                coords = np.unravel_index(x_rows, shape)
                inside = np.all([c < s_ for c, s_ in zip(coords, x.shape, strict=True)], axis=0)
                x_rows = np.where(inside, np.ravel_multi_index(
                    [np.minimum(c, s_ - 1) for c, s_ in zip(coords, x.shape, strict=True)],
                    tuple(x.shape)), -1)
            keep = (y_rows >= 0) & (x_rows >= 0)
            parts.append(group(dx, y_rows[keep], x_rows[keep], m, tr.n))
    else:
        if dx is not None:
            out_rows, in_rows, shape = conv_pairs(tr, 
                tuple(x.shape), w, stride, padding, dilation, groups
            )
            if shape != tuple(o.shape):  # pragma: no cover - torch's shape rule differs
                raise UnsupportedOpError(f"{name(func)}: unexpected shapes {shape}")
            parts.append(group(dx, out_rows, in_rows, m, tr.n))
        if dw is not None:
            # out(n, o, l) may read every weight of channel o
            per = math.prod(w.shape[1:])
            red = group(dw, np.repeat(np.arange(o_ch), per), np.arange(o_ch * per), o_ch,
                         tr.n)
            parts.append(take(red, np.broadcast_to(
                np.arange(o_ch)[None, :, None], (nb, o_ch, L)).reshape(-1)))
    if bias is not None and tr.dep(bias) is not None:
        parts.append(
            take(
                tr.dep(bias),
                np.broadcast_to(np.arange(o_ch)[None, :, None], (nb, o_ch, L)).reshape(-1),
            )
        )
    d = union(parts, tr.n)
    if dx is not None and dw is not None:
        tr.nonlinear(d)
    return [d]


def conv_pairs(
    tr, in_shape: tuple[int, ...], w: torch.Tensor, stride, padding, dilation, groups: int
) -> tuple[np.ndarray, np.ndarray, tuple[int, ...]]:
    """(output row, input row) pairs of a (non-transposed) convolution of an input of shape
    ``in_shape`` (N, C, *spatial, any number of spatial dimensions) with ``w``: output
    ``(n, o, p)`` reads input ``(n, c, p * stride + k * dilation - padding)`` wherever the
    weight ``w[o, c, k]`` may be non-zero (input row -1: padding).  Also the output shape.
    The windows come from slicing a zero-padded tensor of element ids, one kernel offset at
    a time (``F.unfold``'s layout, for any number of dimensions)."""
    nb, c, spatial = in_shape[0], in_shape[1], in_shape[2:]
    kernel = tuple(w.shape[2:])
    o_ch = w.shape[0]
    cg, og = c // groups, o_ch // groups
    out_sp = [
        (s_ + 2 * p_ - d_ * (k_ - 1) - 1) // st + 1
        for s_, p_, d_, k_, st in zip(spatial, padding, dilation, kernel, stride, strict=True)
    ]
    ids = torch.arange(1, math.prod(in_shape) + 1, dtype=torch.float64).reshape(in_shape)
    padded = torch.nn.functional.pad(ids, [q for p_ in reversed(padding) for q in (p_, p_)])
    L = math.prod(out_sp)
    windows = []
    for offset in np.ndindex(*kernel):
        index = [slice(None), slice(None)] + [
            slice(k_ * d_, k_ * d_ + (n_ - 1) * st + 1, st)
            for k_, d_, n_, st in zip(offset, dilation, out_sp, stride, strict=True)
        ]
        windows.append(padded[tuple(index)].reshape(nb, c, L))
    kk = len(windows)
    cols = torch.stack(windows, 2).reshape(nb, c * kk, L).round().to(torch.int64).numpy() - 1
    wm = mask(tr, w).reshape(o_ch, cg * kk)
    oo, tt = np.nonzero(wm)
    cc = (oo // og) * cg * kk + tt
    out_rows = (np.arange(nb)[:, None, None] * o_ch + oo[None, :, None]) * L + np.arange(L)[
        None, None, :
    ]
    in_rows = cols[:, cc, :]
    return out_rows.reshape(-1), in_rows.reshape(-1), (nb, o_ch, *out_sp)
