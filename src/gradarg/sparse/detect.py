"""Global sparsity patterns by tracing: which input elements each output element can depend on.

``fn`` runs once, functionalized (``torch.func.functionalize``, so in-place writes and views
become plain ops), under a ``TorchDispatchMode`` (``torch.utils._python_dispatch``) that sees
every ATen operator.  Next to every floating tensor computed from ``x`` it keeps the set of
input elements each of its elements depends on: a boolean ``numel × n`` matrix in compressed
sparse row form (two numpy arrays).  Each operator maps its operands' sets to its output's sets
by a rule that depends only on shapes and on the zeros of constant operands, never on the
values of ``x``: the result holds for every input (a *global* pattern, as in
SparseConnectivityTracer.jl and JAX's ``asdex``) and is conservative.

Rules: pointwise operators (``torch.Tag.pointwise``) take the union of their broadcast
operands; data movement (views, slicing, indexing with constant indices, ``cat``, padding,
``*_scatter``) is found by running the operator itself on a tensor of element ids; reductions,
scans and softmax take unions over the reduced dimension; layer, group and batch normalisation
take unions over each normalised group (batch norm in evaluation is elementwise); matrix
products and convolutions use the non-zeros of a constant operand (a constant's zeros are zeros
for every input).  A batch norm's running statistics updated in place are not followed.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import torch
from torch.utils import _pytree as pytree
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils.weak import WeakIdKeyDictionary

__all__ = ["UnsupportedOpError", "hessian_sparsity", "jacobian_sparsity"]

aten = torch.ops.aten


class UnsupportedOpError(NotImplementedError):
    """An operator on a tensor that depends on ``x`` has no sparsity rule."""


# ---------------------------------------------------------------------------------------------
# Index sets: a boolean numel x n matrix in CSR form (indptr, indices), rows sorted and unique.


class _Dep:
    __slots__ = ("indices", "indptr")

    def __init__(self, indptr: np.ndarray, indices: np.ndarray) -> None:
        self.indptr = indptr
        self.indices = indices

    @property
    def m(self) -> int:
        return self.indptr.size - 1

    def lengths(self) -> np.ndarray:
        return np.diff(self.indptr)

    def rows(self) -> np.ndarray:
        return np.repeat(np.arange(self.m, dtype=np.int64), self.lengths())


def _identity(n: int) -> _Dep:
    return _Dep(np.arange(n + 1, dtype=np.int64), np.arange(n, dtype=np.int64))


def _from_pairs(rows: np.ndarray, cols: np.ndarray, m: int, n: int) -> _Dep:
    """Canonical CSR of the (row, col) pairs: sorted, duplicates removed."""
    if rows.size == 0:
        return _Dep(np.zeros(m + 1, dtype=np.int64), np.zeros(0, dtype=np.int64))
    keys = np.unique(rows * n + cols)
    r, c = np.divmod(keys, n)
    indptr = np.zeros(m + 1, dtype=np.int64)
    np.cumsum(np.bincount(r, minlength=m), out=indptr[1:])
    return _Dep(indptr, c)


def _take(dep: _Dep, ids: np.ndarray) -> _Dep:
    """Row ``k`` of the result is row ``ids[k]`` of ``dep`` (empty where ``ids[k] < 0``)."""
    ids = np.asarray(ids, dtype=np.int64)
    valid = ids >= 0
    safe = np.where(valid, ids, 0)
    lens = np.where(valid, dep.indptr[safe + 1] - dep.indptr[safe], 0)
    indptr = np.zeros(ids.size + 1, dtype=np.int64)
    np.cumsum(lens, out=indptr[1:])
    total = int(indptr[-1])
    pos = np.repeat(dep.indptr[safe] - indptr[:-1], lens) + np.arange(total, dtype=np.int64)
    return _Dep(indptr, dep.indices[pos])


def _union(deps: list[_Dep], n: int) -> _Dep:
    """Row-wise union of equally long row lists."""
    if len(deps) == 1:
        return deps[0]
    m = deps[0].m
    rows = np.concatenate([d.rows() for d in deps])
    cols = np.concatenate([d.indices for d in deps])
    return _from_pairs(rows, cols, m, n)


def _group(dep: _Dep, out_rows: np.ndarray, in_rows: np.ndarray, m: int, n: int) -> _Dep:
    """Row ``o`` of the result is the union of rows ``in_rows[k]`` with ``out_rows[k] == o``."""
    keep = in_rows >= 0
    out_rows, in_rows = out_rows[keep], in_rows[keep]
    gathered = _take(dep, in_rows)
    return _from_pairs(np.repeat(out_rows, gathered.lengths()), gathered.indices, m, n)


def _vstack(deps: list[_Dep]) -> _Dep:
    parts, offset = [np.zeros(1, dtype=np.int64)], 0
    for d in deps:
        parts.append(d.indptr[1:] + offset)
        offset += int(d.indptr[-1])
    return _Dep(np.concatenate(parts), np.concatenate([d.indices for d in deps]))


def _arange(shape: tuple[int, ...]) -> np.ndarray:
    return np.arange(math.prod(shape), dtype=np.int64).reshape(shape)


def _broadcast_ids(shape: tuple[int, ...], out_shape: tuple[int, ...]) -> np.ndarray:
    return np.broadcast_to(_arange(shape), out_shape).reshape(-1)


# ---------------------------------------------------------------------------------------------
# Operator tables


def _ops(*names: str) -> frozenset:
    """Overload packets (``aten.view``) by name; names this torch lacks are skipped."""
    return frozenset(getattr(aten, s) for s in names if hasattr(aten, s))


# each output element is a copy of one operand element (or a zero / a constant)
_MOVES = _ops(
    "view",
    "_unsafe_view",
    "reshape",
    "view_copy",
    "_reshape_alias",
    "_reshape_alias_copy",
    "permute",
    "permute_copy",
    "transpose",
    "transpose_copy",
    "transpose_",
    "t",
    "t_copy",
    "t_",
    "expand",
    "expand_copy",
    "squeeze",
    "squeeze_copy",
    "squeeze_",
    "unsqueeze",
    "unsqueeze_copy",
    "unsqueeze_",
    "alias",
    "alias_copy",
    "clone",
    "slice",
    "slice_copy",
    "select",
    "select_copy",
    "narrow",
    "narrow_copy",
    "index",
    "index_select",
    "gather",
    "take",
    "cat",
    "stack",
    "constant_pad_nd",
    "flip",
    "roll",
    "repeat",
    "unfold",
    "unfold_copy",
    "diagonal",
    "diagonal_copy",
    "diag_embed",
    "tril",
    "triu",
    "split",
    "split_copy",
    "split_with_sizes",
    "split_with_sizes_copy",
    "unbind",
    "unbind_copy",
    "chunk",
    "slice_scatter",
    "select_scatter",
    "diagonal_scatter",
    "copy",
    "copy_",
    "index_put",
    "scatter",
    "reflection_pad1d",
    "reflection_pad2d",
    "replication_pad1d",
    "replication_pad2d",
    "upsample_nearest1d",
    "upsample_nearest2d",
    "im2col",
    "movedim",
    "pixel_shuffle",
    "pixel_unshuffle",
    "lift_fresh_copy",
    "_conj",
    "resolve_conj",
    "resolve_neg",
)
# outputs carry no derivative with respect to any input
_CONSTANT = _ops(
    "detach",
    "detach_copy",
    "zeros_like",
    "ones_like",
    "empty_like",
    "full_like",
    "rand_like",
    "randn_like",
    "randint_like",
    "bernoulli",
    "floor",
    "ceil",
    "round",
    "trunc",
    "sign",
    "sgn",
    "new_zeros",
    "new_ones",
    "new_empty",
    "new_full",
    "empty_strided",
    "fill",
)
_REDUCTIONS = _ops(
    "sum",
    "mean",
    "nansum",
    "nanmean",
    "prod",
    "amax",
    "amin",
    "max",
    "min",
    "linalg_vector_norm",
    "norm",
    "var",
    "std",
    "logsumexp",
    "var_mean",
    "std_mean",
    "aminmax",
)
_SCANS = _ops("cumsum", "cumprod", "logcumsumexp", "cummax", "cummin")
_WHOLE_DIM = _ops("_softmax", "_log_softmax", "softmax", "log_softmax")
_PRODUCTS = _ops("mm", "bmm", "mv", "dot", "addmm", "addmv", "baddbmm")
# order statistics along one dimension: each output element is some element of its slice
_ORDER = _ops("sort", "topk", "kthvalue", "median", "nanmedian", "mode", "msort")
# every output element depends on its whole group (normalised slice, channel group, channel)
_NORMS = _ops(
    "native_layer_norm",
    "native_group_norm",
    "native_batch_norm",
    "_native_batch_norm_legit",
    "_native_batch_norm_legit_no_training",
    "_native_batch_norm_legit_functional",
)
_SCALAR_LINEAR = _ops(
    "add",
    "sub",
    "neg",
    "where",
    "masked_fill",
    "clone",
    "copy",
    "copy_",
    "positive",
    "alias",
    "_to_copy",
    "lift_fresh_copy",
    "relu",
    "abs",
    "clamp",
    "clamp_min",
    "clamp_max",
    "maximum",
    "minimum",
    "fmax",
    "fmin",
    "hardtanh",
    "leaky_relu",
    "threshold",
    "sum",
    "mean",
    "nansum",
    "amax",
    "amin",
    "max",
    "min",
    "cumsum",
    "cummax",
    "cummin",
    "aminmax",
    "to",
)
# second derivatives vanish wherever they exist (linear or piecewise linear)


def _name(func: Any) -> str:
    return str(func).replace("aten.", "torch.ops.aten.", 1)


def _bind(func: Any, args: tuple, kwargs: dict) -> dict[str, Any]:
    """Arguments by schema name, defaults filled in."""
    out: dict[str, Any] = {}
    for i, a in enumerate(func._schema.arguments):
        if i < len(args):
            out[a.name] = args[i]
        elif a.name in kwargs:
            out[a.name] = kwargs[a.name]
        elif a.has_default_value():
            out[a.name] = a.default_value
        else:
            out[a.name] = None
    return out


def _dims(dim: Any, ndim: int) -> list[int]:
    if dim is None or (isinstance(dim, (list, tuple)) and len(dim) == 0):
        return list(range(ndim))
    dims = [dim] if isinstance(dim, int) else list(dim)
    return sorted({d % max(ndim, 1) for d in dims}) if ndim else []


def _floating(t: Any) -> bool:
    return isinstance(t, torch.Tensor) and (t.is_floating_point() or t.is_complex())


# ---------------------------------------------------------------------------------------------
# The tracing mode


class _Tracer(TorchDispatchMode):
    def __init__(self, n: int, hessian: bool) -> None:
        super().__init__()
        self.n = n
        self.deps: WeakIdKeyDictionary = WeakIdKeyDictionary()
        self.tainted: WeakIdKeyDictionary = WeakIdKeyDictionary()  # value-dependent, no deriv.
        self.hessian = hessian
        self.pairs: list[np.ndarray] = []
        self.pair_count = 0

    # -- bookkeeping
    def dep(self, t: Any) -> _Dep | None:
        return self.deps.get(t) if isinstance(t, torch.Tensor) else None

    def is_tainted(self, t: Any) -> bool:
        return isinstance(t, torch.Tensor) and t in self.tainted

    def add_square(self, dep: _Dep) -> None:
        """Hessian: every pair within each row may interact (a nonlinear operator)."""
        lens = dep.lengths()
        sq = lens * lens
        total = int(sq.sum())
        if total == 0:
            return
        row = np.repeat(np.arange(dep.m, dtype=np.int64), sq)
        start = np.repeat(np.cumsum(sq) - sq, sq)
        local = np.arange(total, dtype=np.int64) - start
        a, b = np.divmod(local, lens[row])
        base = dep.indptr[row]
        keys = np.unique(dep.indices[base + a] * self.n + dep.indices[base + b])
        self.pairs.append(keys)
        self.pair_count += keys.size
        if self.pair_count > 4 * 10**6 and len(self.pairs) > 1:
            merged = np.unique(np.concatenate(self.pairs))
            self.pairs, self.pair_count = [merged], merged.size

    # -- dispatch
    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        out = func(*args, **kwargs)
        leaves = pytree.tree_leaves((args, kwargs))
        tracked = [t for t in leaves if self.dep(t) is not None]
        tainted = any(self.is_tainted(t) for t in leaves)
        if not tracked:
            if tainted and func.overloadpacket is aten._local_scalar_dense:
                raise UnsupportedOpError(
                    "fn converts a value computed from x into a Python number (control flow or "
                    "an index taken from the values of x): the pattern would hold only for this "
                    "x; use gradarg.sparsity_pattern (a local pattern)"
                )
            if tainted:
                for o in pytree.tree_leaves(out):
                    if isinstance(o, torch.Tensor):
                        self.tainted[o] = True
            return out
        packet = func.overloadpacket
        if packet is aten._local_scalar_dense:
            raise UnsupportedOpError(
                "fn turns a tensor that depends on x into a Python number (.item(), bool(), "
                "int(), a Python `if` on its value): the dependency would be lost, or the "
                "pattern would hold only for the branch taken; keep the computation in "
                "tensors (torch.where) or use gradarg.sparsity_pattern (a local pattern)"
            )
        outs = [o for o in pytree.tree_leaves(out) if isinstance(o, torch.Tensor)]
        if packet in _CONSTANT:
            new: list[_Dep | None] = [None] * len(outs)
        else:
            new = self.rule(func, packet, args, kwargs, out, outs)
        for o, d in zip(outs, new, strict=True):
            if d is not None and _floating(o):
                if d.m != o.numel():  # pragma: no cover - a rule's shape bug, never silent
                    raise AssertionError(f"{func}: {d.m} rows for {o.numel()} elements")
                self.deps[o] = d
            else:
                self.deps.pop(o, None)
                self.tainted[o] = True
        # in-place operators (squeeze_, t_, ... after functionalization) update their target
        first = func._schema.arguments[0] if func._schema.arguments else None
        writes = first is not None and first.alias_info is not None and first.alias_info.is_write
        target = args[0] if args else None
        if writes and isinstance(target, torch.Tensor) and outs and outs[0] is not target:
            if outs[0] in self.deps:
                self.deps[target] = self.deps[outs[0]]
            else:
                self.deps.pop(target, None)
        return out

    def rule(self, func, packet, args, kwargs, out, outs) -> list[_Dep | None]:
        if not any(_floating(o) for o in outs):  # argmax, comparisons: no derivative
            return [None] * len(outs)
        if packet is aten._to_copy or packet is aten.to or packet is aten.lift_fresh:
            d = self.dep(args[0])
            return [d if _floating(outs[0]) else None]
        if torch.Tag.pointwise in func.tags and len(outs) == 1:
            return [self.pointwise(func, packet, args, kwargs, outs[0])]
        if packet in _MOVES:
            return self.moves(func, args, kwargs, outs)
        if packet in _REDUCTIONS:
            return self.reduction(func, packet, args, kwargs, outs)
        if packet in _SCANS:
            return self.scan(func, packet, args, kwargs, outs)
        if packet in _WHOLE_DIM:
            b = _bind(func, args, kwargs)
            d = self.whole_dim(self.dep(b["self"]), tuple(b["self"].shape), b["dim"])
            self.nonlinear(d)
            return [d]
        if packet in _PRODUCTS:
            return [self.product(func, packet, args, kwargs, outs[0])]
        if packet in _NORMS:
            return self.normalization(func, packet, args, kwargs, outs)
        if packet in _ORDER:
            return self.order(func, packet, args, kwargs, outs)
        if packet is aten.convolution:
            return [self.convolution(func, args, kwargs, outs[0])]
        raise UnsupportedOpError(
            f"no sparsity rule for {_name(func)} (called on a tensor that depends on x); "
            f"gradarg.sparsity_pattern(fn, x) finds a local pattern from dense Jacobians "
            f"instead"
        )

    def nonlinear(self, d: _Dep | None) -> None:
        if self.hessian and d is not None:
            self.add_square(d)

    # -- pointwise
    def pointwise(self, func, packet, args, kwargs, o) -> _Dep | None:
        if not _floating(o):
            return None
        shape = tuple(o.shape)
        parts, count = [], 0
        for t in pytree.tree_leaves((args, kwargs)):
            d = self.dep(t)
            if d is None:
                continue
            count += 1
            parts.append(
                d if tuple(t.shape) == shape else _take(d, _broadcast_ids(tuple(t.shape), shape))
            )
        result = _union(parts, self.n)
        if self.hessian:
            linear = packet in _SCALAR_LINEAR
            if packet is aten.mul:
                linear = count == 1
            elif packet is aten.div:
                linear = count == 1 and self.dep(args[0]) is not None
            if not linear:
                self.add_square(result)
        return result

    # -- data movement: run the operator on element ids
    def moves(self, func, args, kwargs, outs) -> list[_Dep | None]:
        sources: list[_Dep] = []
        offset = 1  # id 0 means "no dependency": zeros, padding, constants

        def swap(t: Any) -> Any:
            nonlocal offset
            if not isinstance(t, torch.Tensor) or not _floating(t):
                if self.is_tainted(t):
                    raise UnsupportedOpError(
                        f"{_name(func)} uses indices computed from the values of x: the "
                        f"pattern would hold only for this x; use gradarg.sparsity_pattern"
                    )
                return t
            d = self.dep(t)
            if d is None:
                return torch.zeros(t.shape, dtype=torch.float64)
            ids = torch.arange(offset, offset + t.numel(), dtype=torch.float64).reshape(t.shape)
            offset += t.numel()
            sources.append(d)
            return ids

        new_args, new_kwargs = pytree.tree_map(swap, (args, kwargs))
        b = _bind(func, args, kwargs)
        if func.overloadpacket is aten.constant_pad_nd:
            new_args = (new_args[0], new_args[1], 0.0)
            new_kwargs = {}
        if func.overloadpacket is aten.index_put and b.get("accumulate"):
            raise UnsupportedOpError(f"no sparsity rule for {_name(func)} with accumulate=True")
        if func.overloadpacket is aten.scatter and "reduce" in b and b["reduce"] is not None:
            raise UnsupportedOpError(f"no sparsity rule for {_name(func)} with reduce=")
        if func.overloadpacket is aten.scatter and func._overloadname.startswith("value"):
            new_args = list(new_args)
            new_args[3] = 0.0
        ids_out = func(*new_args, **new_kwargs)
        stacked = _vstack(sources)
        result: list[_Dep | None] = []
        for o, i in zip(
            outs,
            [t for t in pytree.tree_leaves(ids_out) if isinstance(t, torch.Tensor)],
            strict=True,
        ):
            flat = i.detach().reshape(-1).round().to(torch.int64).numpy() - 1
            result.append(_take(stacked, flat) if _floating(o) else None)
        return result

    # -- reductions and scans
    def reduction(self, func, packet, args, kwargs, outs) -> list[_Dep | None]:
        b = _bind(func, args, kwargs)
        x = b["self"]
        shape = tuple(x.shape)
        dims = _dims(b.get("dim"), len(shape))
        keep = [i for i in range(len(shape)) if i not in dims]
        ids = _arange(shape).transpose(keep + dims) if shape else _arange(shape)
        m_out = math.prod(shape[i] for i in keep)
        r = math.prod(shape[i] for i in dims)
        in_rows = ids.reshape(m_out, r).reshape(-1)
        out_rows = np.repeat(np.arange(m_out, dtype=np.int64), r)
        d = _group(self.dep(x), out_rows, in_rows, m_out, self.n)
        if packet not in _SCALAR_LINEAR:
            self.nonlinear(d)
        result: list[_Dep | None] = []
        for o in outs:
            result.append(d if _floating(o) and o.numel() == m_out else None)
        return result

    def order(self, func, packet, args, kwargs, outs) -> list[_Dep | None]:
        """``sort``, ``topk``, ``kthvalue``, ``median``/``nanmedian``/``mode`` (along a
        dimension, or over all elements), ``msort``: which element of its slice an output
        element is depends on the values, so each depends on its whole slice (conservative).
        Piecewise a selection, so no second derivative.  Index outputs carry none."""
        b = _bind(func, args, kwargs)
        x = b["self"]
        shape = tuple(x.shape)
        d = self.dep(x)
        if not shape:
            return [d if _floating(o) else None for o in outs]
        if "dim" in b and b["dim"] is not None:
            dim = int(b["dim"]) % len(shape)
        elif packet is aten.msort:
            dim = 0
        elif packet in (aten.median, aten.nanmedian) and "dim" not in b:
            dim = None
        else:
            dim = len(shape) - 1
        if dim is None:  # over all elements: one value
            whole = _group(d, np.zeros(math.prod(shape), dtype=np.int64),
                           np.arange(math.prod(shape), dtype=np.int64), 1, self.n)
            return [_take(whole, np.zeros(o.numel(), dtype=np.int64)) if _floating(o) else None
                    for o in outs]
        keep = [i for i in range(len(shape)) if i != dim]
        slices = math.prod(shape[i] for i in keep)
        ids = _arange(shape).transpose([*keep, dim]).reshape(-1)
        reduced = _group(d, np.repeat(np.arange(slices, dtype=np.int64), shape[dim]), ids,
                         slices, self.n)
        result: list[_Dep | None] = []
        for o in outs:
            if not _floating(o):
                result.append(None)
                continue
            o_shape = tuple(o.shape)
            if len(o_shape) == len(shape):  # sort, topk, keepdim=True: the slice of each
                owner = np.moveaxis(
                    np.broadcast_to(
                        np.arange(slices, dtype=np.int64).reshape([shape[i] for i in keep] + [1]),
                        [o_shape[i] for i in keep] + [o_shape[dim]],
                    ),
                    -1,
                    dim,
                ).reshape(-1)
            else:  # the dimension reduced away
                owner = np.arange(slices, dtype=np.int64)
            result.append(_take(reduced, owner))
        return result

    def normalization(self, func, packet, args, kwargs, outs) -> list[_Dep | None]:
        """Layer, group and batch normalisation (``native_layer_norm``, ``native_group_norm``,
        ``native_batch_norm`` and its functional forms).

        Every output element depends on every input element of its group, as do the saved
        mean and inverse standard deviation (and updated running statistics), one row per
        group: the normalised trailing slice (layer norm), the channel group of one sample
        (group norm), the channel across the batch and positions (batch norm in training).
        Batch norm in evaluation is elementwise and affine.  Weight, bias and running
        statistics computed from ``x`` are refused.
        """
        b = _bind(func, args, kwargs)
        x = b["input"]
        for key in ("weight", "bias", "running_mean", "running_var"):
            if self.dep(b.get(key)) is not None or self.is_tainted(b.get(key)):
                raise UnsupportedOpError(
                    f"{_name(func)} with a {key} computed from x has no sparsity rule here; "
                    f"gradarg.sparsity_pattern(fn, x) finds a local pattern instead"
                )
        d = self.dep(x)
        shape = tuple(x.shape)
        numel = math.prod(shape)
        ids = np.arange(numel, dtype=np.int64)
        if packet is aten.native_layer_norm:
            size = math.prod(shape[len(shape) - len(b["normalized_shape"]) :])
            gid, groups = ids // max(size, 1), numel // max(size, 1)
        elif packet is aten.native_group_norm:
            per_sample, group = int(b["C"]) * int(b["HxW"]), int(b["group"])
            per_group = max(per_sample // group, 1)
            gid = (ids // per_sample) * group + (ids % per_sample) // per_group
            groups = int(b["N"]) * group
        else:
            training = packet is not aten._native_batch_norm_legit_no_training and bool(
                b.get("training", True)
            )
            if not training:
                return [d] + [
                    _Dep(np.zeros(o.numel() + 1, dtype=np.int64), np.zeros(0, dtype=np.int64))
                    for o in outs[1:]
                ]
            inner = math.prod(shape[2:])
            gid, groups = (ids // inner) % shape[1], shape[1]
        reduced = _group(d, gid, ids, groups, self.n)
        out = _take(reduced, gid)
        self.nonlinear(out)
        result: list[_Dep | None] = [out]
        for o in outs[1:]:
            if o.numel() == groups:
                result.append(reduced)
            elif o.numel() == 0:
                result.append(_Dep(np.zeros(1, dtype=np.int64), np.zeros(0, dtype=np.int64)))
            else:  # pragma: no cover - an output this rule does not know
                raise UnsupportedOpError(f"{_name(func)}: output of shape {tuple(o.shape)}")
        return result

    def whole_dim(self, d: _Dep, shape: tuple[int, ...], dim: int) -> _Dep:
        """Every element depends on every element of its slice along ``dim``."""
        if not shape:
            return d
        dim %= len(shape)
        t = np.moveaxis(_arange(shape), dim, -1)
        length = shape[dim]
        groups = t.reshape(-1, length)
        m_out = groups.shape[0]
        reduced = _group(
            d,
            np.repeat(np.arange(m_out, dtype=np.int64), length),
            groups.reshape(-1),
            m_out,
            self.n,
        )
        owner = np.empty(math.prod(shape), dtype=np.int64)
        owner[groups.reshape(-1)] = np.repeat(np.arange(m_out, dtype=np.int64), length)
        return _take(reduced, owner)

    def scan(self, func, packet, args, kwargs, outs) -> list[_Dep | None]:
        b = _bind(func, args, kwargs)
        x = b["self"]
        shape = tuple(x.shape)
        d = self.dep(x)
        if shape:
            dim = b["dim"] % len(shape)
            length = shape[dim]
            groups = np.moveaxis(_arange(shape), dim, -1).reshape(-1, length)
            p, q = np.tril_indices(length)
            out_rows = groups[:, p].reshape(-1)
            in_rows = groups[:, q].reshape(-1)
            d = _group(d, out_rows, in_rows, math.prod(shape), self.n)
        if packet not in _SCALAR_LINEAR:
            self.nonlinear(d)
        return [d if _floating(o) else None for o in outs]

    # -- matrix products
    def mask(self, t: torch.Tensor) -> np.ndarray:
        """Where an operand may be non-zero: everywhere unless it is a constant."""
        if self.dep(t) is not None or self.is_tainted(t):
            return np.ones(tuple(t.shape), dtype=bool)
        return (t.detach() != 0).numpy()

    def product(self, func, packet, args, kwargs, o) -> _Dep:
        b = _bind(func, args, kwargs)
        if packet in (aten.addmm, aten.addmv, aten.baddbmm):
            a, bb, bias = (
                b["mat1" if packet is aten.addmm else "mat" if packet is aten.addmv else "batch1"],
                b["mat2" if packet is aten.addmm else "vec" if packet is aten.addmv else "batch2"],
                b["self"],
            )
        else:
            a, bb = args[0], args[1]
            bias = None
        # as batched (B, I, K) @ (B, K, J); row-major flattening is unchanged by these reshapes
        if a.dim() == 1:  # dot
            A3, B3 = a.reshape(1, 1, -1), bb.reshape(1, -1, 1)
        elif a.dim() == 2 and bb.dim() == 1:  # mv
            A3, B3 = a.unsqueeze(0), bb.reshape(1, -1, 1)
        elif a.dim() == 2:
            A3, B3 = a.unsqueeze(0), bb.unsqueeze(0)
        else:
            A3, B3 = a, bb
        nb, ni, nk = A3.shape
        nj = B3.shape[2]
        m = nb * ni * nj
        parts = []
        da, db = self.dep(a), self.dep(bb)
        if da is not None:
            mb = self.mask(B3)
            if mb.all():  # out(b, i, :) = union over k of A(b, i, k)
                red = _group(
                    da, np.repeat(np.arange(nb * ni), nk), np.arange(nb * ni * nk), nb * ni, self.n
                )
                parts.append(_take(red, np.repeat(np.arange(nb * ni), nj)))
            else:
                bs, ks, js = np.nonzero(mb)
                i = np.arange(ni)[:, None]
                out_rows = ((bs * ni + i) * nj + js).reshape(-1)
                in_rows = ((bs * ni + i) * nk + ks).reshape(-1)
                parts.append(_group(da, out_rows, in_rows, m, self.n))
        if db is not None:
            ma = self.mask(A3)
            if ma.all():  # out(b, :, j) = union over k of B(b, k, j)
                ids = _arange((nb, nk, nj)).transpose(0, 2, 1).reshape(-1)
                red = _group(db, np.repeat(np.arange(nb * nj), nk), ids, nb * nj, self.n)
                out_ids = np.arange(nb)[:, None, None] * nj + np.arange(nj)[None, None, :]
                parts.append(_take(red, np.broadcast_to(out_ids, (nb, ni, nj)).reshape(-1)))
            else:
                bs, is_, ks = np.nonzero(ma)
                j = np.arange(nj)[:, None]
                out_rows = ((bs * ni + is_) * nj + j).reshape(-1)
                in_rows = ((bs * nk + ks) * nj + j).reshape(-1)
                parts.append(_group(db, out_rows, in_rows, m, self.n))
        if bias is not None and self.dep(bias) is not None:
            parts.append(_take(self.dep(bias), _broadcast_ids(tuple(bias.shape), tuple(o.shape))))
        d = _union(parts, self.n)
        if da is not None and db is not None:
            self.nonlinear(d)
        return d

    # -- convolution
    def conv_pairs(
        self, in_shape: tuple[int, ...], w: torch.Tensor, stride, padding, dilation, groups: int
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
        wm = self.mask(w).reshape(o_ch, cg * kk)
        oo, tt = np.nonzero(wm)
        cc = (oo // og) * cg * kk + tt
        out_rows = (np.arange(nb)[:, None, None] * o_ch + oo[None, :, None]) * L + np.arange(L)[
            None, None, :
        ]
        in_rows = cols[:, cc, :]
        return out_rows.reshape(-1), in_rows.reshape(-1), (nb, o_ch, *out_sp)

    def convolution(self, func, args, kwargs, o) -> _Dep:
        """Convolutions in any number of spatial dimensions, transposed ones included (the
        transpose of the convolution from the output's space to the input's, same weight)."""
        b = _bind(func, args, kwargs)
        x, w, bias = b["input"], b["weight"], b["bias"]
        stride, padding, dilation = list(b["stride"]), list(b["padding"]), list(b["dilation"])
        groups = int(b["groups"])
        nb, o_ch = o.shape[0], o.shape[1]
        L = math.prod(o.shape[2:])
        m = o.numel()
        parts = []
        dx, dw = self.dep(x), self.dep(w)
        if b["transposed"]:
            if dw is not None or self.is_tainted(w):
                raise UnsupportedOpError(
                    f"no sparsity rule for {_name(func)} (transposed) with a weight computed "
                    f"from x; gradarg.sparsity_pattern(fn, x) finds a local pattern instead"
                )
            if dx is not None:
                # x = A y for the ordinary convolution A of y's shape with the same weight
                x_rows, y_rows, shape = self.conv_pairs(
                    tuple(o.shape), w, stride, padding, dilation, groups
                )
                if shape != tuple(x.shape):  # pragma: no cover - torch's shape rule differs
                    raise UnsupportedOpError(f"{_name(func)}: unexpected shapes {shape}")
                keep = y_rows >= 0
                parts.append(_group(dx, y_rows[keep], x_rows[keep], m, self.n))
        else:
            if dx is not None:
                out_rows, in_rows, shape = self.conv_pairs(
                    tuple(x.shape), w, stride, padding, dilation, groups
                )
                if shape != tuple(o.shape):  # pragma: no cover - torch's shape rule differs
                    raise UnsupportedOpError(f"{_name(func)}: unexpected shapes {shape}")
                parts.append(_group(dx, out_rows, in_rows, m, self.n))
            if dw is not None:
                # out(n, o, l) may read every weight of channel o
                per = math.prod(w.shape[1:])
                red = _group(dw, np.repeat(np.arange(o_ch), per), np.arange(o_ch * per), o_ch,
                             self.n)
                parts.append(_take(red, np.broadcast_to(
                    np.arange(o_ch)[None, :, None], (nb, o_ch, L)).reshape(-1)))
        if bias is not None and self.dep(bias) is not None:
            parts.append(
                _take(
                    self.dep(bias),
                    np.broadcast_to(np.arange(o_ch)[None, :, None], (nb, o_ch, L)).reshape(-1),
                )
            )
        d = _union(parts, self.n)
        if dx is not None and dw is not None:
            self.nonlinear(d)
        return d


# ---------------------------------------------------------------------------------------------
# Public functions


def _trace(fn: Callable[[torch.Tensor], torch.Tensor], x: torch.Tensor, hessian: bool, what: str):
    if not isinstance(x, torch.Tensor) or not x.is_floating_point():
        raise TypeError(
            f"x must be a real floating torch.Tensor, got "
            f"{x.dtype if isinstance(x, torch.Tensor) else type(x).__name__}"
        )
    if not callable(fn):
        raise TypeError(f"fn must be callable, got {type(fn).__name__}")
    x0 = x.detach().clone()
    n = x0.numel()
    tracer = _Tracer(n, hessian)
    tracer.deps[x0] = _identity(n)
    with tracer:
        y = torch.func.functionalize(fn, remove="mutations_and_views")(x0)
    if not isinstance(y, torch.Tensor):
        raise TypeError(f"{what} needs fn(x) to return one tensor, got {type(y).__name__}")
    d = tracer.deps.get(y)
    if d is None:
        d = _Dep(np.zeros(y.numel() + 1, dtype=np.int64), np.zeros(0, dtype=np.int64))
    return tracer, y, d


def _as_pattern(rows: np.ndarray, cols: np.ndarray, y_shape, x_shape, layout) -> torch.Tensor:
    if layout not in (torch.sparse_coo, torch.strided):
        raise ValueError(f"layout must be torch.sparse_coo or torch.strided, got {layout}")
    shape = tuple(y_shape) + tuple(x_shape)
    if layout == torch.strided:
        dense = torch.zeros(math.prod(y_shape), math.prod(x_shape), dtype=torch.bool)
        dense[torch.from_numpy(rows), torch.from_numpy(cols)] = True
        return dense.reshape(shape)
    parts = []
    for idx, s in ((rows, tuple(y_shape)), (cols, tuple(x_shape))):
        if s:
            parts += list(np.unravel_index(idx, s))
    indices = (
        torch.from_numpy(np.stack(parts).astype(np.int64))
        if parts
        else torch.zeros(0, rows.size, dtype=torch.int64)
    )
    return torch.sparse_coo_tensor(
        indices,
        torch.ones(rows.size, dtype=torch.bool),
        shape,
        is_coalesced=True,
        check_invariants=False,
    )


def jacobian_sparsity(
    fn: Callable[[torch.Tensor], torch.Tensor],
    x: torch.Tensor,
    *,
    layout: torch.layout = torch.sparse_coo,
) -> torch.Tensor:
    r"""The global sparsity pattern of the Jacobian of ``fn`` at ``x``, found by tracing ``fn``.

    ``fn`` runs once on a copy of ``x``, functionalized (``torch.func.functionalize``)
    under a ``TorchDispatchMode``.  For every element of
    every tensor computed from ``x`` the set of input elements it depends on is carried through
    each ATen operator by a rule that looks at shapes and at the zeros of constant operands,
    never at the values of ``x`` — so the pattern holds for *every* input (a global pattern,
    as SparseConnectivityTracer.jl's ``TracerSparsityDetector`` and JAX's ``asdex`` find) and
    is conservative: ``True`` wherever ``∂y_i/∂x_j`` may be non-zero for some ``x``.  It can be
    larger than the Jacobian at a given point (``x * 0`` keeps its entries; ``torch.where``
    keeps both branches), never smaller, apart from Python control flow on the values of ``x``
    (refused: converting a tensor that depends on ``x`` to a Python number raises).

    Rules (ATen operators):

    * pointwise operators (every operator tagged ``torch.Tag.pointwise``: arithmetic,
      ``sin``, ``exp``, ``where``, ``clamp``...), with broadcasting: union of the operands;
      ``floor``, ``ceil``, ``round``, ``trunc``, ``sign``, ``detach``, comparisons and integer
      results have zero derivative (empty sets);
    * reductions ``sum``, ``mean``, ``prod``, ``amax``/``amin``/``max``/``min``, ``norm``,
      ``linalg_vector_norm``, ``var``, ``std``, ``logsumexp`` over given dimensions or all;
      scans ``cumsum``, ``cumprod``, ``logcumsumexp``, ``cummax``, ``cummin``; ``softmax`` and
      ``log_softmax``;
    * normalisation: ``layer_norm`` (each element depends on its normalised slice),
      ``group_norm`` (on its channel group in its sample), ``batch_norm`` in training (on its
      channel across the batch; running statistics updated in place are not followed) and in
      evaluation (elementwise); weights, biases and running statistics must not depend on ``x``;
    * order statistics along a dimension (``sort``, ``topk``, ``kthvalue``, ``median``,
      ``nanmedian``, ``mode``, ``msort``): each value depends on its whole slice, since which
      element it is depends on the values;
    * matrix products ``mm``, ``mv``, ``dot``, ``bmm``, ``addmm``, ``addmv``, ``baddbmm`` (hence
      ``matmul``, ``@``, ``nn.Linear``): a constant operand's zeros are used;
    * convolutions in any number of dimensions (``conv1d``/``2d``/``3d`` and
      ``conv_transpose1d``/``2d``/``3d``; any stride, padding, dilation, groups): a constant
      weight's zeros are used (a transposed convolution's weight must not depend on ``x``);
    * data movement — views, ``reshape``, ``permute``, ``transpose``, ``expand``, ``squeeze``,
      ``flatten``, ``clone``, slicing, ``select``, indexing and ``gather``/``index_select`` with
      constant integer indices, ``cat``, ``stack``, ``split``, ``flip``, ``roll``,
      ``repeat``, ``tril``/``triu``, constant, reflection and replication padding, in-place
      writes into slices — by running the operator itself on a tensor of element ids;
    * constants (tensors not computed from ``x``): empty sets.

    Parameters
    ----------
    fn : callable
        ``fn(x)`` returns one tensor; built from the operators above.
    x : torch.Tensor
        Real floating tensor: its shape and dtype are what matter (``fn`` runs on a copy).
    layout : torch.layout
        ``torch.sparse_coo`` (default: coalesced COO, memory ``O(nnz)``) or ``torch.strided``
        (dense).

    Returns
    -------
    torch.Tensor
        ``torch.bool`` pattern of shape ``y.shape + x.shape``, ready for
        ``SparseJacobian(pattern, x.shape)``.

    Raises
    ------
    UnsupportedOpError
        (a ``NotImplementedError``) an operator on a tensor that depends on ``x`` has no rule
        (the message names it); indices computed from the values of ``x``; a tensor that
        depends on ``x`` converted to a Python number.  :func:`sparsity_pattern` (a local
        pattern from dense Jacobians at random points) works for any differentiable ``fn``.
    TypeError
        ``x`` is not a real floating tensor, or ``fn(x)`` is not one tensor.
    ValueError
        ``layout`` is neither ``torch.sparse_coo`` nor ``torch.strided``.

    Examples
    --------
    >>> import torch
    >>> def f(u):                       # 1-D stencil: tridiagonal Jacobian
    ...     up = torch.nn.functional.pad(u, (1, 1))
    ...     return up[:-2] - 2 * u + up[2:] + torch.sin(u)
    >>> P = jacobian_sparsity(f, torch.zeros(5), layout=torch.strided)
    >>> P.int()
    tensor([[1, 1, 0, 0, 0],
            [1, 1, 1, 0, 0],
            [0, 1, 1, 1, 0],
            [0, 0, 1, 1, 1],
            [0, 0, 0, 1, 1]], dtype=torch.int32)
    >>> from gradarg import SparseJacobian
    >>> x = torch.rand(1000, dtype=torch.float64)
    >>> sj = SparseJacobian(jacobian_sparsity(f, x), x.shape)
    >>> sj.passes
    3
    >>> torch.allclose(sj(f, x).to_dense(), torch.func.jacrev(f)(x))
    True
    """
    _, y, d = _trace(fn, x, False, "jacobian_sparsity")
    return _as_pattern(d.rows(), d.indices, tuple(y.shape), tuple(x.shape), layout)


def hessian_sparsity(
    f: Callable[[torch.Tensor], torch.Tensor],
    x: torch.Tensor,
    *,
    layout: torch.layout = torch.sparse_coo,
) -> torch.Tensor:
    r"""A global, conservative sparsity pattern of the Hessian of a scalar ``f``, by tracing.

    Traces ``f`` as :func:`jacobian_sparsity` does and, at every operator that is not linear
    in the inputs that depend on ``x`` (``sin``, ``exp``, ``x * y`` with both depending on
    ``x``, ``prod``, ``norm``, ``softmax``, a product of two tensors that depend on ``x``...),
    marks every pair ``(j, k)`` of input elements that one of its output elements depends on.
    By the chain rule, ``∂²f/∂x_j∂x_k`` can be non-zero only if some nonlinear operator
    combines a dependency on ``x_j`` with one on ``x_k``, so the union of these pairs contains
    the Hessian's pattern for every input.  Linear and piecewise-linear operators (``+``,
    ``-``, scaling by a constant, sums, views, indexing, ``relu``, ``abs``, ``max``,
    ``clamp``, ``where``) add no pair (their second derivatives vanish wherever they exist).
    The pattern can be larger than needed: pairs are also marked for intermediate results that
    do not reach ``f``, and all pairs within an operator's operands (``x * y`` also marks the
    pairs within ``x``).  This is the global Hessian pattern of SparseConnectivityTracer.jl
    (``TracerSparsityDetector``, ``hessian_sparsity``) in a coarser form.

    Parameters
    ----------
    f : callable
        ``f(x)`` returns a tensor with one element.
    x : torch.Tensor
        Real floating tensor (``f`` runs on a copy).
    layout : torch.layout
        ``torch.sparse_coo`` (default) or ``torch.strided``.

    Returns
    -------
    torch.Tensor
        Symmetric ``torch.bool`` pattern of shape ``x.shape + x.shape``.

    Raises
    ------
    UnsupportedOpError
        As in :func:`jacobian_sparsity`.
    TypeError
        ``x`` is not a real floating tensor, or ``f(x)`` is not one tensor.
    ValueError
        ``f(x)`` has more than one element; unknown ``layout``.

    Examples
    --------
    >>> import torch
    >>> def energy(u):                  # a sum of local terms: tridiagonal Hessian
    ...     return ((u[1:] - u[:-1]) ** 2).sum() + torch.cos(u).sum()
    >>> hessian_sparsity(energy, torch.zeros(4), layout=torch.strided).int()
    tensor([[1, 1, 0, 0],
            [1, 1, 1, 0],
            [0, 1, 1, 1],
            [0, 0, 1, 1]], dtype=torch.int32)
    """
    tracer, y, _ = _trace(f, x, True, "hessian_sparsity")
    if y.numel() != 1:
        raise ValueError(
            f"hessian_sparsity needs a scalar f (one element), got an output of shape "
            f"{tuple(y.shape)}; for a vector function use jacobian_sparsity"
        )
    n = tracer.n
    keys = np.unique(np.concatenate(tracer.pairs)) if tracer.pairs else np.zeros(0, np.int64)
    rows, cols = np.divmod(keys, n) if n else (keys, keys)
    return _as_pattern(rows, cols, tuple(x.shape), tuple(x.shape), layout)
