"""Pooling: each output element depends on its window of its plane, found from the shapes.

Windows are separable: along each pooled dimension a boolean matrix ``M[o, i]`` (output
position ``o`` reads input position ``i``); a plane's pairs are their Cartesian product, the
same for every leading index ``(n, c)``.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np
import torch

from ..registry import bind, floating, name, register, value_dependent
from ..sets import Dep, group
from .blocks import lead_blocks

if TYPE_CHECKING:
    from ..mode import Tracer

aten = torch.ops.aten


def _spatial(func) -> int:
    return int(str(func.overloadpacket).split("pool")[-1][0])


def _fill(v, k: int) -> list[int]:
    v = [int(a) for a in (v if isinstance(v, (list, tuple)) else [v])]
    return v * k if len(v) == 1 else v


def sliding(out: int, size: int, kernel: int, stride: int, padding: int,
            dilation: int) -> np.ndarray:
    """``M[o, i]``: input ``i`` is in the window of output ``o`` (``i = o·stride − padding +
    j·dilation``, ``0 ≤ j < kernel``)."""
    m = np.zeros((out, size), dtype=bool)
    o = np.arange(out)[:, None]
    i = o * stride - padding + np.arange(kernel)[None, :] * dilation
    ok = (i >= 0) & (i < size)
    m[np.broadcast_to(o, i.shape)[ok], i[ok]] = True
    return m


def adaptive(out: int, size: int) -> np.ndarray:
    """``M[o, i]`` of adaptive pooling: ``floor(o·size/out) ≤ i < ceil((o+1)·size/out)``."""
    o = np.arange(out)[:, None]
    i = np.arange(size)[None, :]
    return (i >= (o * size) // out) & (i < -((-(o + 1) * size) // out))


def window_dep(tr: Tracer, x: torch.Tensor, o: torch.Tensor, mats: list[np.ndarray]) -> Dep:
    """The sets of ``o`` from ``x``'s through the separable windows ``mats`` (one per trailing
    dimension)."""
    out_rows, in_rows = window_pairs(x, o, mats)
    return group(tr.dep(x), out_rows, in_rows, o.numel(), tr.n)


def window_pairs(x: torch.Tensor, o: torch.Tensor,
                 mats: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """(output row, input row) for every input element in every output element's window."""
    k = len(mats)
    in_sp, out_sp = tuple(x.shape[x.dim() - k:]), tuple(o.shape[o.dim() - k:])
    lead = math.prod(x.shape[: x.dim() - k])
    pairs = [np.nonzero(m) for m in mats]
    grids = np.meshgrid(*[np.arange(p[0].size) for p in pairs], indexing="ij")
    o_flat = np.ravel_multi_index([p[0][g.reshape(-1)] for p, g in zip(pairs, grids,
                                                                       strict=True)], out_sp)
    i_flat = np.ravel_multi_index([p[1][g.reshape(-1)] for p, g in zip(pairs, grids,
                                                                       strict=True)], in_sp)
    po, pi = math.prod(out_sp), math.prod(in_sp)
    ls = np.arange(lead, dtype=np.int64)[:, None]
    out_rows = (ls * po + o_flat[None, :]).reshape(-1)
    in_rows = (ls * pi + i_flat[None, :]).reshape(-1)
    return out_rows, in_rows


def _result(tr: Tracer, d: Dep, outs, linear: bool) -> list[Dep | None]:
    if not linear:
        tr.nonlinear(d)
    return [d if floating(o) and o.numel() == d.m else None for o in outs]


@register("max_pool1d", "max_pool2d", "max_pool3d", "max_pool1d_with_indices",
          "max_pool2d_with_indices", "max_pool3d_with_indices", "avg_pool1d", "avg_pool2d",
          "avg_pool3d", family="pooling")
def pool(tr: Tracer, func, args, kwargs, outs) -> list[Dep | None]:
    """``max_pool*`` (with or without indices) and ``avg_pool*``: the window of each output
    element (kernel, stride, padding, dilation; the output size, ``ceil_mode`` included, is
    the one torch computed)."""
    b = bind(func, args, kwargs)
    x, o = b["self"], outs[0]
    k = _spatial(func)
    kernel = _fill(b["kernel_size"], k)
    stride = _fill(b.get("stride") or kernel, k)
    padding = _fill(b.get("padding", 0), k)
    dilation = _fill(b.get("dilation", 1) if "dilation" in b else 1, k)
    in_sp, out_sp = x.shape[x.dim() - k:], o.shape[o.dim() - k:]
    mats = [sliding(out_sp[j], in_sp[j], kernel[j], stride[j], padding[j], dilation[j])
            for j in range(k)]
    # max is piecewise linear, the average linear: no second derivative
    return _result(tr, window_dep(tr, x, o, mats), outs, linear=True)


@register("_adaptive_avg_pool1d", "_adaptive_avg_pool2d", "_adaptive_avg_pool3d",
          "adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_avg_pool3d",
          "adaptive_max_pool1d", "adaptive_max_pool2d", "adaptive_max_pool3d",
          family="pooling")
def adaptive_pool(tr: Tracer, func, args, kwargs, outs) -> list[Dep | None]:
    """Adaptive pools: output ``o`` of a dimension of size ``out`` reads inputs
    ``floor(o·size/out)`` to ``ceil((o+1)·size/out) − 1`` (ATen's ``start_index`` /
    ``end_index``)."""
    x, o = args[0], outs[0]
    k = _spatial(func)
    in_sp, out_sp = x.shape[x.dim() - k:], o.shape[o.dim() - k:]
    mats = [adaptive(out_sp[j], in_sp[j]) for j in range(k)]
    return _result(tr, window_dep(tr, x, o, mats), outs, linear=True)


@register("max_unpool2d", "max_unpool3d", family="pooling")
def unpool(tr: Tracer, func, args, kwargs, outs) -> list[Dep | None]:
    """``max_unpool*(self, indices, ...)``: element ``q`` of plane ``l`` of ``self`` goes to
    position ``indices[l, q]`` of plane ``l`` of the output (a constant ``indices``); with
    indices computed from ``x``, each plane of the output depends on the plane of ``self``."""
    x, indices, o = args[0], args[1], outs[0]
    k = _spatial(func)
    if tr.dep(indices) is not None:  # pragma: no cover - integer indices carry no set
        raise value_dependent(f"{name(func)} with indices computed from x")
    lead = tuple(x.shape[: x.dim() - k])
    if tr.is_tainted(indices):
        return lead_blocks(tr, func, [x], outs, lead)
    planes = math.prod(lead)
    pi = math.prod(x.shape[x.dim() - k:])
    po = math.prod(o.shape[o.dim() - k:])
    idx = indices.detach().reshape(planes, pi).numpy().astype(np.int64)
    ls = np.arange(planes, dtype=np.int64)[:, None]
    ok = (idx >= 0) & (idx < po)
    out_rows = (ls * po + idx)[ok]
    in_rows = np.broadcast_to(ls * pi + np.arange(pi)[None, :], idx.shape)[ok]
    return [group(tr.dep(x), out_rows, in_rows, o.numel(), tr.n)]


@register("max_pool2d_with_indices_backward", "max_pool3d_with_indices_backward",
          family="pooling")
def pool_backward(tr: Tracer, func, args, kwargs, outs) -> list[Dep | None]:
    """The gradient of max pooling: ``grad_output[l, q]`` is added at position
    ``indices[l, q]`` of plane ``l`` (constant indices); with indices computed from ``x``,
    every position gathers the outputs whose window holds it.  ``self`` enters only through
    the indices (no derivative)."""
    b = bind(func, args, kwargs)
    g, x, indices, o = b["grad_output"], b["self"], b["indices"], outs[0]
    k = _spatial(func)
    d = tr.dep(g)
    if d is None:
        return [None]
    if not tr.is_tainted(indices):
        planes = math.prod(g.shape[: g.dim() - k])
        pg = math.prod(g.shape[g.dim() - k:])
        po = math.prod(o.shape[o.dim() - k:])
        idx = indices.detach().reshape(planes, pg).numpy().astype(np.int64)
        ls = np.arange(planes, dtype=np.int64)[:, None]
        out_rows = (ls * po + idx).reshape(-1)
        in_rows = (ls * pg + np.arange(pg)[None, :]).reshape(-1)
        return [group(d, out_rows, in_rows, o.numel(), tr.n)]
    kernel = _fill(b["kernel_size"], k)
    stride = _fill(b.get("stride") or kernel, k)
    padding, dilation = _fill(b["padding"], k), _fill(b["dilation"], k)
    in_sp, out_sp = x.shape[x.dim() - k:], g.shape[g.dim() - k:]
    mats = [sliding(out_sp[j], in_sp[j], kernel[j], stride[j], padding[j], dilation[j])
            for j in range(k)]
    window_out, window_in = window_pairs(x, g, mats)  # (g row, x row) pairs
    return [group(d, window_in, window_out, o.numel(), tr.n)]


INTERPOLATIONS = ("upsample_linear1d", "upsample_bilinear2d", "upsample_trilinear3d",
                  "upsample_bicubic2d", "_upsample_bilinear2d_aa", "_upsample_bicubic2d_aa")


@register(*INTERPOLATIONS, family="pooling")
def interpolation(tr: Tracer, func, args, kwargs, outs) -> list[Dep | None]:
    """Linear, bilinear, trilinear and bicubic interpolation (antialiased too): separable and
    linear with constant weights, so the window of each dimension is the non-zeros of the
    operator applied to the identity along that dimension: exact.  Every other dimension has
    size 2 (kept, its scale dropped) and the identity is constant along it, so its weights,
    which sum to one, leave the values unchanged (size 1 is avoided: the antialiased CPU
    kernel of torch 2.13 mixes rows when a dimension goes from 1 to 1)."""
    b = bind(func, args, kwargs)
    x, o = b["self"], outs[0]
    if func._overloadname != "default":  # pragma: no cover - .vec overloads decompose first
        from .blocks import planes

        return planes(tr, func, args, kwargs, outs)
    k = len(b["output_size"])
    scales = [a.name for a in func._schema.arguments if a.name.startswith("scales")]
    in_sp, out_sp = tuple(x.shape[x.dim() - k:]), tuple(o.shape[o.dim() - k:])
    mats = []
    for j in range(k):
        size = in_sp[j]
        shape = [size, 1] + [1] * k
        shape[2 + j] = size
        wide = [size, 1] + [2] * k
        wide[2 + j] = size
        call = dict(b)
        call["self"] = torch.eye(size, dtype=torch.float64).reshape(shape).expand(wide)
        call["output_size"] = [out_sp[i] if i == j else 2 for i in range(k)]
        for i, s_ in enumerate(scales):
            if i != j:
                call[s_] = None
        weights = func(*[call[a.name] for a in func._schema.arguments])
        first = [slice(None), 0] + [0] * k
        first[2 + j] = slice(None)
        mats.append((weights[tuple(first)].reshape(size, out_sp[j]) != 0).numpy().T)
    return _result(tr, window_dep(tr, x, o, mats), outs, linear=True)
