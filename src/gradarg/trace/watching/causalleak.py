"""Attention that lets a position read later positions while the loss asks it to predict the
next token: a language model trained without (or with a flipped) causal mask copies its
target from the input, and its loss falls far below what the data allows, with every gradient
finite and nonzero.

Read from the graph at the ``backward()`` call, once the targets are known to be the model's
token ids one position ahead (:mod:`.tokenshift`): an attention softmax (``SoftmaxBackward0``
over the last dimension) whose saved weights are square over the sequence, ``(..., T, T)``
with ``T`` the model's token positions, and give weight above the diagonal (row ``t`` reading
a column ``s > t``); or ``F.scaled_dot_product_attention`` over ``T`` positions with neither
``is_causal`` nor a mask that hides every later position (its saved arguments); or scores
multiplied by a constant ``(..., T, T)`` matrix nonzero above the diagonal (retention, which has
no softmax: its decay matrix is the mask); or a vector norm over the positions of a
``(batch, positions, features)`` tensor (``F.normalize``'s default ``dim=1``).

Imports ``trace.graph.nodes`` only.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import torch

from ..graph.nodes import MOVES, reach, saved_value

__all__ = ["Leak", "conv_leak", "future_leak"]

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
    how: str = ""  # where the leak was read, in words, when not from saved weights or SDPA
    conv: bool = False  # a convolution's padding, not an attention
    fix: str = ""  # what to do, when not a causal mask on an attention


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


_SCALED = MOVES | {"MulBackward0", "DivBackward0"}  # views and scalings of the scores
_MATMUL = frozenset({"BmmBackward0", "MmBackward0", "MatmulBackward0", "BaddbmmBackward0"})


def _scores_below(node: Any) -> bool:
    """Whether a product's input with history is scores straight from a matrix product
    (``q @ k.T``, through views and scalings only): not weights a softmax or a mask already
    shaped (a dropout mask on causal attention weights is not a leak)."""
    return reach(node, _MATMUL, _SCALED, 4) is not None


def _product_leak(node: Any, positions: int) -> Leak | None:
    """A product of scores with a constant ``(..., T, T)`` matrix that is nonzero above the
    diagonal (retention's decay ``gamma ** |n - m|`` where RetNet's is ``gamma ** (n - m)``
    for ``n >= m`` and 0 above): the matrix is the causal mask, and it lets row ``t`` read
    columns after ``t``."""
    for attr, other in (("_saved_other", "_saved_self"), ("_saved_self", "_saved_other")):
        m = saved_value(node, attr, hooked=False)
        if (not isinstance(m, torch.Tensor) or m.requires_grad or m.dim() < 2
                or m.shape[-1] != positions or m.shape[-2] != positions
                or not m.is_floating_point()):
            continue
        o = saved_value(node, other, hooked=False)
        if isinstance(o, torch.Tensor) and not o.requires_grad:
            continue  # two constants: not scores
        if not _scores_below(node):
            continue
        sample = m.detach().reshape(-1, positions, positions)[:MATRICES].float()
        rows = int((sample.abs() * _upper(positions)).sum(-1).gt(0).sum(-1).max())
        if rows:
            return Leak(type(node).__name__, positions, None, (
                f"a constant {list(m.shape)} matrix multiplied into the scores, nonzero above "
                f"the diagonal in {rows} of its {positions} rows: a decay or mask that must be "
                f"0 above the diagonal (RetNet's gamma ** (n - m) for n >= m), not one that "
                f"decays with the distance either way"))
    return None


def _norm_leak(node: Any, positions: int) -> Leak | None:
    """A vector norm over the positions of a ``(batch, positions, features)`` tensor (the
    default ``dim=1`` of ``F.normalize`` on hidden states): every position is divided by a
    norm that reads the positions after it."""
    x = saved_value(node, "_saved_self", hooked=False)
    dims = saved_value(node, "_saved_dim", hooked=False)
    if not isinstance(x, torch.Tensor) or x.dim() != 3 or not isinstance(dims, tuple):
        return None
    dims = tuple(d % 3 for d in dims)
    if 1 not in dims or x.shape[1] != positions or 2 in dims:
        return None
    return Leak(type(node).__name__, positions, None, (
        f"a vector norm over dim 1 of a {list(x.shape)} tensor, the positions (F.normalize's "
        f"default dim=1 on (batch, positions, features)): each position is divided by a norm "
        f"over every position, the later ones included"), False,
        "normalise each position over its features (F.normalize(x, dim=-1))")


def future_leak(roots: list[Any], positions: int) -> Leak | None:
    """The first attention among the nodes reached from ``roots`` (the losses' nodes, at most
    :data:`VISITS`) over ``positions`` positions that lets a position read a later one."""
    seen, todo = set(roots), list(roots)
    while todo and len(seen) <= VISITS:
        n = todo.pop(0)
        name = type(n).__name__
        leak = (_softmax_leak(n, positions) if name in _SOFTMAX else
                _sdpa_leak(n, positions) if name == _SDPA else
                _product_leak(n, positions) if name == "MulBackward0" else
                _norm_leak(n, positions) if name == "LinalgVectorNormBackward0" else None)
        if leak is not None:
            return leak
        for c, _ in n.next_functions:
            if c is not None and c not in seen:
                seen.add(c)
                todo.append(c)
    return None


def conv_leak(model: torch.nn.Module, positions: int) -> Leak | None:
    """The first ``nn.Conv1d`` of ``model`` padded on both sides so that its output is as long
    as its input (``padding=d (k - 1) / 2``, or ``"same"``), kernel above 1: output ``t``
    reads inputs up to ``t + right padding``.  A convolution padded by ``d (k - 1)`` on both
    sides (the causal idiom that drops the last outputs) or not at all is not named."""
    for name, m in model.named_modules():
        if not isinstance(m, torch.nn.Conv1d) or m.padding_mode != "zeros":
            continue
        k, d = m.kernel_size[0], m.dilation[0]
        total = d * (k - 1)
        if m.padding == "same":
            right = total - total // 2
        elif isinstance(m.padding, tuple) and 2 * m.padding[0] == total:
            right = m.padding[0]
        else:
            continue
        if k > 1 and right > 0:
            return Leak(f"module '{name}' (Conv1d)", positions, None, (
                f"padding {right} on its right with kernel {k} and dilation {d}: its output at "
                f"t reads inputs up to t + {right}, and the layers above add theirs"), True)
    return None
