"""A softmax over candidates that are all the same: the scores come from a matrix product whose
second operand's columns (the candidates: in-batch items, keys, class prototypes) are equal, so
every row of the scores holds one value repeated, the softmax is uniform, a cross-entropy over it
is exactly ``log C`` whatever the parameters, and its gradient cancels: with every candidate
``v``, row ``i`` of ``u @ V.T`` sends ``sum_j (p_ij - y_ij) v = (sum_j p_ij - 1) v = 0`` back to
``u_i``, and the candidates' side gets the same sum.  In-batch negatives on a batch of one item
(an interaction log sorted by item and not shuffled), duplicated candidates, or embeddings that
collapsed to one point.  Read from the loss's first nodes at the ``backward()`` call, before the
backward frees what they saved: a ``LogSoftmaxBackward0`` or ``SoftmaxBackward0`` whose saved
output is constant along its dimension in every row, reached from a ``MmBackward0`` /
``BmmBackward0`` through operations of one tensor input (a division by a temperature) and whose
saved second operand has equal columns.

Imports ``trace.graph.nodes``' ``saved_value`` and :mod:`.slip` only.
"""

from __future__ import annotations

from typing import Any

import torch

from ..graph.nodes import saved_value
from .slip import Slip

__all__ = ["STARTS", "same_candidates"]

_MOST = 1 << 22  # entries of a softmax's output or an operand read at most
_SOFTMAX = ("LogSoftmaxBackward0", "SoftmaxBackward0")
_PRODUCTS = ("MmBackward0", "BmmBackward0")
_DEPTH = 4  # operations of one tensor input between the product and the softmax


# the node classes its scan starts from: with none of them in the nodes given, it finds nothing
STARTS = frozenset(_SOFTMAX)


def same_candidates(walked: list[Any]) -> Slip | None:
    """The first softmax of ``walked`` (a loss's first autograd nodes) over scores that are
    constant in every row because they are a product with identical candidates, as a
    :class:`~.slip.Slip` ``"same-candidates"``: ``op`` the softmax's node, ``shape`` the
    scores', ``other`` (the softmax's dimension, the product's node name as the index of
    :data:`_PRODUCTS`), ``value`` ``log C`` (the loss per row of a cross-entropy over them);
    ``None``: none."""
    for n in walked:
        name = type(n).__name__
        if name not in _SOFTMAX:
            continue
        out, dim = (saved_value(n, a, hooked=False) for a in ("_saved_result", "_saved_dim"))
        if (not isinstance(out, torch.Tensor) or not isinstance(dim, int) or out.dim() < 2
                or not 0 < out.numel() <= _MOST or not out.is_floating_point()):
            continue
        dim %= out.dim()
        count = out.shape[dim]
        # the graph's shape first, then the candidates (smaller than the scores), then the rows
        product = _product_below(n) if count >= 2 and dim == out.dim() - 1 else None
        if product is None:
            continue
        operand = saved_value(product, "_saved_mat2", hooked=False)
        if (not isinstance(operand, torch.Tensor) or not _equal_columns(operand.detach())
                or not _constant_rows(out.detach())):
            continue
        return Slip("same-candidates", name, tuple(out.shape),
                    (dim, _PRODUCTS.index(type(product).__name__)),
                    value=float(torch.log(torch.tensor(float(count), dtype=torch.float64))))
    return None


def _tolerance(t: torch.Tensor) -> float:
    """Rounding allowance for entries of ``t``: 64 ulps of its dtype at its largest entry."""
    scale = max(1.0, float(t.abs().max())) if t.numel() else 1.0
    return 64 * torch.finfo(t.dtype).eps * scale


def _constant_rows(out: torch.Tensor) -> bool:
    """Every row (along the last dimension) of ``out`` holds one finite value, to rounding."""
    if not bool(torch.isfinite(out).all()):
        return False
    spread = out.amax(-1) - out.amin(-1)
    return float(spread.max()) <= _tolerance(out)


def _equal_columns(mat2: torch.Tensor) -> bool:
    """The columns (last dimension) of ``mat2``, the right operand of ``a @ mat2``, are equal,
    to rounding, and not all zero (zero candidates give constant scores by another cause)."""
    if (mat2.dim() < 2 or mat2.shape[-1] < 2 or not 0 < mat2.numel() <= _MOST
            or not mat2.is_floating_point() or not bool(torch.isfinite(mat2).all())):
        return False
    if float(mat2.abs().max()) == 0.0:
        return False
    return float((mat2 - mat2[..., :1]).abs().max()) <= _tolerance(mat2)


def _product_below(node: Any) -> Any | None:
    """The ``MmBackward0`` / ``BmmBackward0`` the softmax's input came from, through at most
    :data:`_DEPTH` nodes with one input that carries gradient (a division or multiplication by a
    number, a view); ``None``: another operation first."""
    for _ in range(_DEPTH + 1):
        children = [c for c, _ in node.next_functions if c is not None]
        if len(children) != 1:
            return None
        node = children[0]
        if type(node).__name__ in _PRODUCTS:
            return node
    return None
