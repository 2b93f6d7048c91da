"""An attention softmax nearly one-hot on most of its rows: scores ``q · k`` so large that most
rows put more than 0.99 of their weight on one key, where the softmax's derivative
``p (1 - p)`` is almost 0, so the scores, and the query and key projections that make them,
get almost no gradient (a saturated softmax).  Scores of that size come from inputs far above
unit scale: the Transformer's ``embedding * sqrt(d_model)`` on ``nn.Embedding``'s default
N(0, 1) rows (the paper's rows have variance ``1 / d_model``), or no ``1 / sqrt(d)``.

Read from a loss's first autograd nodes at the ``backward()`` call, before the backward frees
what they saved: a ``SoftmaxBackward0`` over the last dimension whose input is a matrix
product (``bmm`` / ``baddbmm`` / ``mm``: ``nn.MultiheadAttention`` with ``need_weights``, a
hand-written attention), its saved output; or ``scaled_dot_product_attention``'s CPU node,
whose weights ``exp(q kᵀ · scale - logsumexp)`` are computed again from its saved query, key
and logsumexp.  Rows with one key allowed (a causal mask's first) are not counted; fewer than
:data:`ROWS` counted rows state nothing.

Imports ``trace.graph.nodes``' ``saved_value``, ``trace.graph.values``' ``number`` and
:mod:`.slip` only.
"""

from __future__ import annotations

import math
from typing import Any

import torch

from ..graph.nodes import saved_value
from ..graph.values import number
from .slip import Slip

__all__ = ["LARGE", "PEAK", "ROWS", "SHARE", "STARTS", "peaked_softmax", "peaked_words"]

PEAK = 0.99  # a row whose largest weight is above this is nearly one-hot
SHARE = 0.4  # named when at least this share of the counted rows is nearly one-hot
ROWS = 8  # rows with two keys or more needed to state anything
LARGE = 2.0  # an embedding's scale times its rows' standard deviation named from this on
_MOST = 1 << 22  # entries of attention weights computed or read at most
_PRODUCTS = ("BmmBackward0", "BaddbmmBackward0", "MmBackward0")
_SDPA = "ScaledDotProductFlashAttentionForCpuBackward0"
_DEPTH = 4  # one-input operations between the product and the softmax (a scale, a mask)
_BELOW = 64  # nodes searched under the scores for an embedding times a number


# the node classes its scan starts from: with none of them in the nodes given, it finds nothing
STARTS = frozenset({"SoftmaxBackward0", _SDPA})


def peaked_softmax(deep: list[Any]) -> Slip | None:
    """The first attention softmax among ``deep`` (a loss's first autograd nodes) nearly
    one-hot on at least :data:`SHARE` of its rows, as a :class:`~.slip.Slip`
    ``"peaked-softmax"``: ``shape`` the weights', ``other`` (nearly one-hot rows, rows
    counted, keys), ``low`` the rows' mean entropy in nats, ``high`` the uniform weights'
    (``log`` of the keys allowed, averaged), ``value`` the number an embedding was multiplied
    by on the way to the scores (``None``: none found) and ``op`` that embedding's rows'
    standard deviation as text (``""``: none); ``None``: no such softmax."""
    for n in deep:
        name = type(n).__name__
        weights = (_softmax_weights(n) if name == "SoftmaxBackward0" else
                   _sdpa_weights(n) if name == _SDPA else None)
        if weights is None:
            continue
        rows = weights.reshape(-1, weights.shape[-1])
        allowed = (rows > 0).sum(1)
        rows, allowed = rows[allowed >= 2], allowed[allowed >= 2].double()
        if rows.shape[0] < ROWS:
            continue
        peaked = int((rows.max(1).values > PEAK).sum())
        if peaked < SHARE * rows.shape[0]:
            continue
        p = rows.double()
        entropy = float(-(torch.where(p > 0, p * p.clamp_min(1e-300).log(), 0.0)).sum(1).mean())
        scale, spread = _embedding_scale(n)
        return Slip("peaked-softmax", spread, tuple(weights.shape),
                    (peaked, rows.shape[0], weights.shape[-1]), low=entropy,
                    high=float(allowed.log().mean()), value=scale)
    return None


def _softmax_weights(node: Any) -> torch.Tensor | None:
    """The saved output of a softmax over the last dimension of scores from a product."""
    out, dim = (saved_value(node, a, hooked=False) for a in ("_saved_result", "_saved_dim"))
    if (not isinstance(out, torch.Tensor) or not isinstance(dim, int) or out.dim() < 2
            or dim % out.dim() != out.dim() - 1 or not 0 < out.numel() <= _MOST
            or not out.is_floating_point() or out.shape[-1] < 2):
        return None
    below = node
    for _ in range(_DEPTH + 1):
        children = [c for c, _ in below.next_functions if c is not None]
        if len(children) != 1:
            return None
        below = children[0]
        if type(below).__name__ in _PRODUCTS:
            out = out.detach().float()
            return out if bool(torch.isfinite(out).all()) else None
    return None


def _sdpa_weights(node: Any) -> torch.Tensor | None:
    """``scaled_dot_product_attention``'s weights, from what its CPU node saved."""
    q, k, lse, scale, causal, mask = (saved_value(node, f"_saved_{a}", hooked=False) for a in (
        "query", "key", "logsumexp", "scale", "is_causal", "attn_mask"))
    if not (isinstance(q, torch.Tensor) and isinstance(k, torch.Tensor)
            and isinstance(lse, torch.Tensor)) or q.shape[-1] < 1:
        return None
    if q.shape[:-1].numel() * k.shape[-2] > _MOST or k.shape[-2] < 2:
        return None
    scale = number(scale) if scale is not None else 1 / math.sqrt(q.shape[-1])
    if scale is None:
        return None
    s = q.detach().float() @ k.detach().float().transpose(-2, -1) * scale
    if causal is True:
        s = s.masked_fill(torch.ones(s.shape[-2:], dtype=torch.bool).triu(1), -math.inf)
    if isinstance(mask, torch.Tensor):
        s = (s.masked_fill(~mask, -math.inf) if mask.dtype == torch.bool
             else s + mask.detach().float())
    weights = torch.exp(s - lse.detach().float().unsqueeze(-1))
    return weights if bool(torch.isfinite(weights).all()) else None


def _embedding_scale(node: Any) -> tuple[float | None, str]:
    """A number > 1 an ``nn.Embedding``'s output was multiplied by under ``node`` (within
    :data:`_BELOW` nodes), and the embedding's rows' standard deviation as text."""
    seen, queue = {node}, [node]
    while queue and len(seen) < _BELOW:
        n = queue.pop(0)
        children = [c for c, _ in n.next_functions if c is not None]
        if type(n).__name__ == "MulBackward0" and len(children) == 1 \
                and type(children[0]).__name__ == "EmbeddingBackward0":
            for a in ("_saved_other", "_saved_self"):
                c = number(saved_value(n, a, hooked=False))
                if c is not None and c > 1:
                    leaf = next((x for x, _ in children[0].next_functions if x is not None), None)
                    weight = getattr(leaf, "variable", None)
                    if not isinstance(weight, torch.Tensor) or weight.numel() < 2:
                        return None, ""
                    std = float(weight.detach().float().std())
                    # a cause only when it makes entries well above unit scale
                    return (c, f"{std:.3g}") if c * std >= LARGE else (None, "")
        for c in children:
            if c not in seen:
                seen.add(c)
                queue.append(c)
    return None, ""


def peaked_words(s: Slip) -> tuple[str | None, str]:
    """The words for a ``"peaked-softmax"`` slip: a problem when the scale that made the
    scores is found (an embedding scaled up), else a note of what this batch shows (after
    training, peaked attention can be what the model learned)."""
    peaked, rows, keys = s.other
    said = (f"an attention softmax over {keys} keys is nearly one-hot on this batch: "
            f"{peaked} of its {rows} rows put more than {PEAK} of their weight on one key "
            f"(mean entropy {s.low:.2g} nats, against {s.high:.2g} for uniform weights; "
            f"observed: the attention weights its graph saved): there its derivative "
            f"p (1 - p) is almost 0, which keeps the gradient reaching the scores, and the "
            f"query and key projections that make them, small (a saturated softmax)")
    if s.value is None:
        return None, (said + "; at initialisation this means scores far above unit scale "
                      "(keep q · k / sqrt(d) near 1), after training it can be learned")
    root = round(s.value * s.value)
    named = (f" = sqrt({root}), sqrt(d_model)" if abs(root - s.value * s.value) < 1e-3
             and root > 1 else "")
    return (said + f"; the scores are too large: they come from an embedding (nn.Embedding) "
            f"whose rows have standard deviation {s.op}, scaled by {s.value:.3g}{named}; that "
            f"scale goes with embedding rows of variance 1 / d_model (the Transformer paper's),"
            f" not nn.Embedding's default N(0, 1) init: initialise the embedding with std "
            f"d_model ** -0.5, or drop the scale"), ""
