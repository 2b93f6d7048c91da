"""Attention that lets a position read later positions while the loss asks it to predict the
next token: a language model trained without (or with a flipped) causal mask copies its
target from the input, and its loss falls far below what the data allows, with every gradient
finite and nonzero.

Read from the graph at the ``backward()`` call, once the targets are known to be the model's
token ids one position ahead (:mod:`.tokenshift`): an attention softmax (``SoftmaxBackward0``
over the last dimension) whose saved weights are square over the sequence, ``(..., T, T)``
with ``T`` the model's token positions, and give weight above the diagonal (row ``t`` reading
a column ``s > t``); or ``F.scaled_dot_product_attention`` over ``T`` positions with neither
``is_causal`` nor a mask that hides every later position (its saved arguments).

Imports ``trace.graph.nodes`` only.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import torch

from ..graph.nodes import saved_value

__all__ = ["Leak", "future_leak"]

VISITS = 4096  # graph nodes visited from the loss
MATRICES, ROWS = 8, 64  # attention matrices and rows of each read (a long sequence's are large)
_SDPA = "ScaledDotProductFlashAttentionForCpuBackward0"
_SOFTMAX = ("SoftmaxBackward0", "SafeSoftmaxBackward0")  # the second: SDPA's math path


class Leak(NamedTuple):
    """``op`` (the attention's node) over ``positions`` positions: ``weight`` the mean total
    attention weight a row gives to later positions, over the rows read (the first
    :data:`ROWS` of the first :data:`MATRICES` matrices; ``None``: not saved, an SDPA call
    without ``is_causal`` or a mask hiding them)."""

    op: str
    positions: int
    weight: float | None


def _upper(n: int) -> torch.Tensor:
    return torch.ones(n, n, dtype=torch.bool).triu(1)


def _softmax_leak(node: Any, positions: int) -> Leak | None:
    att = saved_value(node, "_saved_result", hooked=False)
    dim = saved_value(node, "_saved_dim", hooked=False)
    if (not isinstance(att, torch.Tensor) or att.dim() < 2 or dim not in (-1, att.dim() - 1)
            or att.shape[-1] != positions or att.shape[-2] != positions):
        return None
    rows = min(positions, ROWS)  # a leak shows in the first rows: a few of them are read
    sample = att.detach().reshape(-1, positions, positions)[:MATRICES, :rows].float()
    later = (sample * _upper(positions)[:rows]).sum(-1)  # per row, above the diagonal
    weight = float(later.mean())
    return Leak(type(node).__name__, positions, weight) if float(later.max()) > 0 else None


def _sdpa_leak(node: Any, positions: int) -> Leak | None:
    q = saved_value(node, "_saved_query", hooked=False)
    if saved_value(node, "_saved_is_causal", hooked=False) is True:
        return None
    if not isinstance(q, torch.Tensor) or q.dim() < 2 or q.shape[-2] != positions:
        return None
    mask = saved_value(node, "_saved_attn_mask", hooked=False)
    if isinstance(mask, torch.Tensor):
        hidden = ~mask if mask.dtype == torch.bool else torch.isneginf(mask)
        if bool(hidden.expand(*hidden.shape[:-2], positions, positions)[..., _upper(positions)]
                .all()):
            return None
    return Leak(type(node).__name__, positions, None)


def future_leak(roots: list[Any], positions: int) -> Leak | None:
    """The first attention among the nodes reached from ``roots`` (the losses' nodes, at most
    :data:`VISITS`) over ``positions`` positions that lets a position read a later one."""
    seen, todo = set(roots), list(roots)
    while todo and len(seen) <= VISITS:
        n = todo.pop(0)
        name = type(n).__name__
        leak = (_softmax_leak(n, positions) if name in _SOFTMAX else
                _sdpa_leak(n, positions) if name == _SDPA else None)
        if leak is not None:
            return leak
        for c, _ in n.next_functions:
            if c is not None and c not in seen:
                seen.add(c)
                todo.append(c)
    return None
