"""Values as the trace room shows and measures them: leaf helpers every other module uses.

Imports nothing of the trace room (so that the tracer, the drawings and the gradient-flow
record can all use it without import cycles).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

import torch

__all__ = [
    "RESIDUES", "SHOWN_ENTRIES", "combine", "dense_values", "fingerprint", "finite", "fmt_norm", "local_sum",
    "nonfinite_entries", "nonfinite_kinds", "norm", "number", "plain", "same_print", "state",
    "stored", "tensors", "whole_features",
]

SHOWN_ENTRIES = 6
"""A tensor with at most this many entries is printed and drawn by its values, a larger one by
its shape and norm."""


def dense_values(t: torch.Tensor) -> torch.Tensor:
    """The stored values of ``t``: ``t`` itself if strided, the nonzero values if sparse.

    ``isfinite``, ``ne`` and ``any`` are not implemented for sparse COO tensors (the gradients
    of ``nn.Embedding(sparse=True)`` and ``nn.EmbeddingBag``); their ``coalesce().values()`` are.
    Other sparse layouts (CSR, ...) are made dense; a nested tensor gives its components'
    entries, flattened one after the other (``ne`` and ``isfinite`` do not take it).
    """
    if t.is_nested:
        parts = [p.reshape(-1) for p in t.unbind()]
        return torch.cat(parts) if parts else t.new_empty(0)
    if t.layout == torch.sparse_coo:
        return t.coalesce().values()
    if t.layout != torch.strided:
        return t.to_dense()
    return t


def shape_text(t: torch.Tensor) -> str:
    """``t``'s shape as the messages write it: ``"(2, 3)"``, or for a nested tensor, which has
    no single shape, its components': ``"nested (2,), (3,)"``.

    >>> shape_text(torch.zeros(2, 3))
    '(2, 3)'
    """
    if t.is_nested:
        return "nested " + ", ".join(str(tuple(p.shape)) for p in t.unbind())
    return str(tuple(t.shape))


def stored(t: torch.Tensor) -> bool:
    """Whether the entries of ``t`` are in memory, so that reading them is safe.

    False when ``t``'s storage holds fewer bytes than its view reaches (``storage_offset()``
    plus ``(size - 1) * stride`` in each dimension, plus one entry) or ``t`` is on the ``meta``
    device.  FSDP2 frees an unsharded parameter once it is resharded by resizing its storage to
    0 bytes (``untyped_storage().resize_(0)``), keeping its shape: reading its entries then
    reads freed memory (a segmentation fault, not an error).  Tensors read through methods of
    their own (DTensor, sparse, functorch's wrappers, which have no storage) are True.
    """
    if t.is_meta:
        return False
    if not isinstance(t, torch.Tensor) or t.layout != torch.strided or not t.numel() \
            or _is_dtensor(t):
        return True
    try:
        nbytes = t.untyped_storage().nbytes()
    except (RuntimeError, NotImplementedError):  # no storage: a wrapper of another tensor
        return True
    if t.is_contiguous():  # the common case: the view ends at offset + numel
        end = t.storage_offset() + t.numel()
    else:
        end = t.storage_offset() + 1 + sum((n - 1) * s
                                           for n, s in zip(t.shape, t.stride(), strict=True))
    return nbytes >= end * t.element_size()


def number(v: Any) -> float | None:
    """``v`` as a float when it is one number without autograd history (a Python int or
    float, not a bool, or a one-entry tensor that does not require grad); else ``None``.  A
    constant an autograd node saved (``8`` of ``8 * x``) reads this way."""
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return float(v)
    if isinstance(v, torch.Tensor) and v.numel() == 1 and not v.requires_grad:
        return float(v)
    return None


def plain(t: Any) -> bool:
    """Whether ``t`` is a plain strided tensor (``torch.Tensor`` or ``nn.Parameter``, not a
    subclass such as DTensor) whose entries are in memory (:func:`stored`): safe to sample
    with ``torch.take``."""
    return (type(t) in (torch.Tensor, torch.nn.Parameter) and t.layout is torch.strided
            and stored(t))


def local_sum(t: torch.Tensor) -> float | None:
    """The sum of ``t``'s entries as a float (a complex one as real + pi * imaginary; of
    this process's shard for a DTensor: no collective), or ``None`` when they are not in
    memory (:func:`stored`): not read."""
    t = t.detach()
    if _is_dtensor(t) and hasattr(t, "to_local"):
        t = t.to_local()
    if not stored(t):
        return None
    total = t.sum()
    # a complex sum as one number: its real part plus pi times its imaginary part
    return float(total.real) + math.pi * float(total.imag) if total.is_complex() \
        else float(total)


RESIDUES = 7  # partial sums of the entries at flat positions i with i % RESIDUES == r


def fingerprint(t: torch.Tensor) -> tuple[float, ...] | None:
    """``(sum, 2-norm, partial sums)`` of ``t``'s entries (this process's shard for a DTensor),
    or ``None`` when they are not in memory: what an update that changes any entry almost
    surely changes.  The sum alone stays equal under an update whose entries cancel: an Adam
    step whose moments hold one gradient moves every entry by the same amount up or down
    (``m̂ / sqrt(v̂) = ±1``, Kingma and Ba 2015, with ``.grad`` zero or equal to that one), and
    a weight with as many entries moved up as down keeps its sum; the 2-norm then changes by
    ``2 step Σ ±w_i + n step²``, which can round to nothing in float32 (a weight of 50
    entries moved by 1e-3).  The partial sums over the flat positions of each residue modulo
    :data:`RESIDUES` (one reduction of a ``(n // 7) × 7`` view, plus the rest) ask the
    cancellation to happen in every class at once, and see a swap of two entries of
    different classes, which keeps both the sum and the norm."""
    total = local_sum(t)
    if total is None:
        return None
    t = t.detach()
    if _is_dtensor(t) and hasattr(t, "to_local"):
        t = t.to_local()
    norm = float(torch.linalg.vector_norm(t))
    if t.layout != torch.strided:
        return (total, norm)
    flat = t.reshape(-1)
    n = flat.numel() // RESIDUES * RESIDUES
    parts = flat[:n].view(-1, RESIDUES).sum(0) if n else flat.new_zeros(RESIDUES)
    rest = flat[n:]
    if rest.numel():  # parts is a new tensor (a sum, or zeros): added to in place
        parts[: rest.numel()] += rest
    if parts.is_complex():
        parts = torch.view_as_real(parts).reshape(-1)
    return (total, norm, *parts.tolist())


def same_print(a: tuple[float, ...], b: tuple[float, ...]) -> bool:
    """Whether two :func:`fingerprint` values are equal (NaN equal to NaN)."""
    return len(a) == len(b) and all(x == y or (math.isnan(x) and math.isnan(y))
                                    for x, y in zip(a, b, strict=True))


def finite(t: torch.Tensor | None) -> bool:
    """Whether every stored value of ``t`` is finite (``None`` and integer tensors are): a
    strided floating ``t`` whose sum is finite is (one reduction, where ``isfinite(t).all()``
    is several operations), else every entry is checked."""
    if t is None or not (t.is_floating_point() or t.is_complex()):
        return True
    if (t.layout == torch.strided and not t.is_nested and t.is_floating_point()
            and math.isfinite(t.detach().sum().item())):
        return True
    return bool(torch.isfinite(dense_values(t)).all())


# the kinds of non-finite value, each with its test, in the order they are named
_NONFINITE = (("NaN", torch.isnan), ("+inf", torch.isposinf), ("-inf", torch.isneginf))


def nonfinite_entries(t: Any) -> str:
    """Which non-finite values ``t`` holds and how many, as ``"-inf in 40 of its 640
    entries"`` (NaN, +inf and -inf counted apart); ``""`` when it holds none, or is not a
    floating tensor."""
    if not isinstance(t, torch.Tensor) or not t.is_floating_point():
        return ""
    d = dense_values(t.detach())
    parts = [f"{what} in {k}" for what, test in _NONFINITE if (k := int(test(d).sum()))]
    if not parts:
        return ""
    return f"{', '.join(parts)} of its {d.numel()} entries" + whole_features(d)


def whole_features(d: torch.Tensor) -> str:
    """When the non-finite entries of ``d``, a ``(batch, features, ...)`` tensor of at least two
    examples, fill some of its features (dimension 1) in every example and nothing else:
    ``", all in N of its F features (dimension 1), in every one of its B examples"`` and what
    makes such columns; else ``""``."""
    if d.dim() < 2 or d.shape[0] < 2 or d.shape[1] < 2:
        return ""
    bad = ~torch.isfinite(d.transpose(0, 1).reshape(d.shape[1], d.shape[0], -1))
    column = bad.all(2).all(1)  # a feature non-finite in every example (and every position)
    if not bool(column.any()) or bool(bad[~column].any()):
        return ""
    return (f", all in {int(column.sum())} of its {d.shape[1]} features (dimension 1), in every "
            f"one of its {d.shape[0]} examples: a per-feature operation gives that (a "
            f"normalisation (x - mean) / std of a constant feature divides 0 by a std of 0, "
            f"NaN: add an eps to the std)")


def nonfinite_kinds(ts: Any) -> str:
    """The kinds of non-finite value the floating tensors ``ts`` hold, as ``"NaN"``,
    ``"+inf"``, ``"-inf"`` or several of them joined by ``" and "``; ``""``: none."""
    found = [what for what, test in _NONFINITE
             if any(bool(test(dense_values(t.detach())).any()) for t in ts
                    if isinstance(t, torch.Tensor) and t.is_floating_point())]
    return " and ".join(found)


def norm(g: torch.Tensor) -> float:
    """The 2-norm of a gradient as a float: 0.0 only if every entry is 0, NaN/Inf only if one is.

    The norm is taken in the gradient's dtype (fast); the rare results that could be wrong
    there are checked on the entries: 0 (the squares of entries below about 1e-19 underflow in
    float32) and Inf (squares above about 1e19 overflow) are redone in float64. Sparse COO
    gradients (``nn.Embedding(sparse=True)``) are coalesced first: elementwise functions such as
    ``isfinite`` are not implemented for them, their values are.
    """
    if type(g) is torch.Tensor and g.layout == torch.strided:  # the common case, checked first
        if g.dtype in _DOT and g.is_contiguous():
            # the sum of squares as a dot product: 0.6x vector_norm's time at 65536 float32
            # entries on one thread, never slower measured up to 8M entries (1 and 2 threads)
            flat = g.view(-1)
            n = math.sqrt(torch.dot(flat, flat).item())
        else:
            n = torch.linalg.vector_norm(g).item()
        if n != 0.0 and n != math.inf:
            return n
        return _checked(g, n)
    if _is_dtensor(g):
        # a sharded gradient (FSDP2): the norm of the whole tensor, summed over the shards of
        # every process (a collective: each process must ask for the same norms, in order)
        return float(torch.linalg.vector_norm(g).full_tensor().item())
    if g.is_sparse:
        g = g.coalesce().values()
    elif g.layout != torch.strided:
        g = g.to_dense()
    return _checked(g, torch.linalg.vector_norm(g).item())


_DOT = (torch.float32, torch.float64)  # real dtypes whose squares torch.dot sums


def _checked(g: torch.Tensor, n: float) -> float:
    """``n``, the norm of dense ``g`` in its dtype, redone in float64 when it is 0 or Inf while
    the entries say otherwise (underflow or overflow of the squares)."""
    if n == 0.0 or n == math.inf:
        if n == 0.0 and not bool((g != 0).any()):  # != 0: complex any() warns in torch 2.1
            return 0.0
        if n == math.inf and not bool(torch.isfinite(g).all()):
            return math.inf
        wide = g.to(torch.complex128 if g.is_complex() else torch.float64)
        n = torch.linalg.vector_norm(wide).item()
    return n


def _is_dtensor(t: torch.Tensor) -> bool:
    return type(t).__name__ == "DTensor" and hasattr(t, "full_tensor")


def tensors(value: Any) -> Iterable[torch.Tensor]:
    """Every tensor in nested tuples, lists and dicts (LSTM returns ``(out, (h, c))``)."""
    if isinstance(value, torch.Tensor):
        yield value
    elif isinstance(value, (tuple, list)):
        for v in value:
            yield from tensors(v)
    elif isinstance(value, dict):
        for v in value.values():
            yield from tensors(v)


def combine(norms: list[float]) -> float | None:
    """The norm of several tensors taken together: sqrt of the sum of squared norms."""
    if not norms:
        return None
    if any(math.isnan(n) for n in norms):
        return math.nan
    return math.sqrt(sum(n * n for n in norms))


def state(norm: float | None) -> str:
    if norm is None:
        return "none"
    if not math.isfinite(norm):
        return "nonfinite"
    return "zero" if norm == 0.0 else "ok"


def fmt_norm(v: float | None) -> str:
    from ...show.render import fmt

    if v is None:
        return "—"
    if math.isnan(v):
        return "NaN"
    if math.isinf(v):
        return "Inf"
    return fmt(v, digits=3)
