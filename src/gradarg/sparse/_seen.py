"""The colourings ``jacobian(fn, x, sparsity=P)`` has made, kept for the next call with ``P``.

A Newton loop written the obvious way passes the same pattern on every step; colouring it
again each time costs more than the compressed passes.  The cache is keyed by the pattern's
content (a hash of the bytes that hold its entries, with its layout and shape, the input's
shape and the method), never by the tensor object: a rebuilt pattern with the same entries
hits, a different pattern of the same shape (or the same tensor edited in place) misses.  Bounded: the :data:`MAX_ENTRIES` most recently
used :class:`~gradarg.SparseJacobian` objects.
"""

from __future__ import annotations

import hashlib
import weakref
from collections import OrderedDict
from typing import Any

import torch

MAX_ENTRIES = 8
_SEEN: OrderedDict[tuple, Any] = OrderedDict()
# The last pattern object hashed, its parts' version counters then, and its key: the same
# unmodified tensor passed again (the Newton loop) is not hashed again.
_LAST: tuple[weakref.ref, tuple[int, ...], tuple] | None = None


def _key(pattern: Any, x_shape: torch.Size, method: str) -> tuple | None:
    """The pattern's content as a key, or ``None`` for what is not a plain boolean tensor (then
    ``SparseJacobian`` says what is wrong).

    A hash of the bytes that hold the entries (the dense tensor; a COO tensor's indices and
    values; a CSR tensor's compressed rows, columns and values) with layout, shape, the input
    shape and the method: equal keys mean equal patterns.  The same entries stored differently
    (coalesced or not, dense or sparse) are another key: a colouring computed once more, never
    a wrong one.  Hashing costs about 1 ms per 1.5 MB; the same unmodified tensor object as
    in the last call is not hashed again.
    """
    if type(pattern) is not torch.Tensor or pattern.dtype != torch.bool or pattern.is_meta:
        return None
    parts: tuple[torch.Tensor, ...]
    if pattern.layout == torch.sparse_coo:
        parts = (pattern._indices(), pattern._values())
    elif pattern.layout == torch.sparse_csr:
        parts = (pattern.crow_indices(), pattern.col_indices(), pattern.values())
    elif pattern.layout == torch.strided:
        parts = (pattern,)
    else:
        return None
    global _LAST
    versions = (pattern._version, *(part._version for part in parts))
    last = _LAST
    if last is not None and last[0]() is pattern and last[1] == versions:
        content = last[2]
    else:
        digest = hashlib.sha256()  # hardware-accelerated on current x86 and ARM: ~1.5 GB/s
        for part in parts:
            t = part.detach().cpu().contiguous()
            digest.update(str((t.dtype, tuple(t.shape))).encode())
            digest.update(t.view(-1).numpy().tobytes())
        content = (digest.hexdigest(), pattern.layout, tuple(pattern.shape))
        _LAST = (weakref.ref(pattern), versions, content)
    return (*content, tuple(x_shape), method)


def sparse_jacobian_for(pattern: Any, x_shape: torch.Size, method: str, build) -> Any:
    """``build()`` (a new ``SparseJacobian``) unless one for the same pattern content is kept."""
    key = _key(pattern, x_shape, method)
    if key is None:
        return build()
    sj = _SEEN.pop(key, None)
    if sj is None:
        sj = build()
    _SEEN[key] = sj  # most recently used last
    while len(_SEEN) > MAX_ENTRIES:
        _SEEN.popitem(last=False)
    return sj


def clear() -> None:
    """Forget every kept colouring."""
    global _LAST
    _SEEN.clear()
    _LAST = None
