"""An inductor graph pass for the compiled sparse derivatives: small matrix products transposed.

On the CPU, inductor hands a matrix product to torch's ``mm`` (MKL here), which is slow when
the result has few columns: ``(1024 × 16) @ (16 × 8)`` in float64 took 27 µs, the same product
computed as ``((16 × 8)ᵀ @ (1024 × 16)ᵀ)ᵀ`` 9 µs, and 17 µs with the copy back to row-major
(torch 2.13, one thread).  A per-sample MLP's reverse pass is such a product (the batch and the
colours times a narrow layer), so :class:`TransposedSmallMatmuls` rewrites each ``aten.mm``
whose result has at most 16 columns and at least 4 times as many rows into the transposed
product, and inductor lays out what follows.  Whether it pays depends on what consumes the
product, so :class:`gradarg.sparse.CompiledSparse` compiles it as one more candidate, timed,
and only for a function whose graph holds a matrix product (:func:`has_matmul`).

The rewrite computes the same sums of products (their order inside the BLAS kernel may
differ: rounding only).  ``uuid()`` is a hash of this file, so inductor's FX graph cache keys
a graph compiled with the pass by this code.

May import torch and :mod:`gradarg.core.graph` (its graph walk).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import torch

from ..core.graph import walk_graph

__all__ = ["MAX_COLUMNS", "MIN_ROWS_PER_COLUMN", "has_matmul", "transposed_small_matmuls"]

MAX_COLUMNS = 16
MIN_ROWS_PER_COLUMN = 4

_MATMUL_NODES = ("mm", "mv", "linear")  # in autograd node names: MmBackward0, AddmmBackward0...


def has_matmul(fn: Callable[[torch.Tensor], Any], x: torch.Tensor) -> bool:
    """Whether ``fn(x)``'s autograd graph holds a matrix product (``mm``, ``addmm``, ``bmm``,
    ``mv``, ``linear`` backward nodes): one eager forward pass, on a copy of ``x``.

    Examples
    --------
    >>> w = torch.rand(2, 4)
    >>> has_matmul(lambda u: torch.tanh(u @ w), torch.rand(3, 2))
    True
    >>> has_matmul(torch.sin, torch.rand(3))
    False
    """
    with torch.enable_grad():
        y = fn(x.detach().clone().requires_grad_(True))
    if not isinstance(y, torch.Tensor) or y.grad_fn is None:
        return False
    return any(any(part in node.name().lower() for part in _MATMUL_NODES)
               for node in walk_graph([y.grad_fn]))


@functools.cache
def transposed_small_matmuls() -> Any | None:
    """The pass (one instance), an inductor ``CustomGraphPass`` (``None`` on a torch without
    it), for ``torch.compile(options={"post_grad_custom_post_pass": ...})``."""
    try:
        from torch._inductor.custom_graph_pass import CustomGraphPass, get_hash_for_files
    except ImportError:
        return None

    class TransposedSmallMatmuls(CustomGraphPass):  # type: ignore[misc, valid-type]
        """``mm(a, b)`` -> ``mm(bᵀ, aᵀ)ᵀ`` where the result has at most
        :data:`MAX_COLUMNS` columns and :data:`MIN_ROWS_PER_COLUMN` times as many rows."""

        def __call__(self, graph: torch.fx.Graph) -> None:
            aten = torch.ops.aten
            for node in list(graph.nodes):
                if node.op != "call_function" or node.target is not aten.mm.default:
                    continue
                a, b = node.args
                va, vb = a.meta.get("val"), b.meta.get("val")
                if not (isinstance(va, torch.Tensor) and isinstance(vb, torch.Tensor)):
                    continue
                rows, cols = va.shape[0], vb.shape[1]
                if not (isinstance(rows, int) and isinstance(cols, int)
                        and va.dtype in (torch.float32, torch.float64)
                        and cols <= MAX_COLUMNS and rows >= MIN_ROWS_PER_COLUMN * cols):
                    continue
                with graph.inserting_before(node):
                    bt = graph.call_function(aten.permute.default, (b, [1, 0]))
                    at = graph.call_function(aten.permute.default, (a, [1, 0]))
                    product = graph.call_function(aten.mm.default, (bt, at))
                    out = graph.call_function(aten.permute.default, (product, [1, 0]))
                bt.meta["val"], at.meta["val"] = vb.t(), va.t()
                product.meta["val"] = torch.mm(bt.meta["val"], at.meta["val"])
                out.meta["val"] = product.meta["val"].t()
                node.replace_all_uses_with(out)
                graph.erase_node(node)

        def uuid(self) -> Any:
            return get_hash_for_files((__file__,))

    return TransposedSmallMatmuls()
