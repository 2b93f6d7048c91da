"""A loss that takes the log of a clamped value, ``log(p.clamp(eps, 1 - eps))``, read from the
saved values of its first autograd nodes at the ``backward()`` call.  The clamp keeps the log
finite, but its derivative is 0 wherever its input is outside ``[min, max]``
(``ClampBackward1``: ``grad * (min <= x <= max)``, PyTorch's ``derivatives.yaml``), so every
entry it clipped sends exactly zero gradient back: with probabilities clamped before a
cross-entropy, the examples whose target probability is below ``eps`` (the most confidently
wrong ones) are pinned at ``-log(eps)`` and do not train.  ``F.cross_entropy`` on the logits,
``log_softmax`` or ``F.binary_cross_entropy_with_logits`` keep their gradient.

Only the entries the log reads are counted: the picks between the clamp and the log
(``p[rows, targets]``, ``gather``, ``select``, a slice) are applied to the clamp's saved input.
Where every use of the log's output is a product with a saved tensor (``t * log(p)``, the
weights of a binary cross-entropy written by hand), only the entries some weight keeps
(nonzero) are counted: a clipped entry whose weight is 0 sends no gradient either way.

Imports :func:`gradarg.trace.graph.nodes.saved_value` only.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import torch

from ..graph.nodes import saved_value

__all__ = ["Clipped", "clipped_before_log", "weights_of"]

LOGS = ("LogBackward0", "Log2Backward0", "Log10Backward0")
CLAMPS = ("ClampBackward0", "ClampBackward1", "ClampMinBackward0", "ClampMaxBackward0")
# between the clamp and the log: nodes that pick entries (applied to the count) or keep them
# all (views, which change no count)
_KEEP = ("ViewBackward0", "ReshapeAliasBackward0", "UnsqueezeBackward0", "SqueezeBackward0",
         "SqueezeBackward1", "SqueezeBackward4", "CloneBackward0", "TBackward0",
         "TransposeBackward0", "PermuteBackward0", "ExpandBackward0")
_PICK = ("IndexBackward0", "GatherBackward0", "SelectBackward0", "SliceBackward0")
STEPS = 4  # nodes between the log and the clamp


class Clipped(NamedTuple):
    """``clipped`` of the ``read`` entries the log reads were outside the clamp's bounds
    (``low``, ``high``: ``None`` where unbounded); ``clamp`` and ``log``: the nodes' names;
    ``shape``: the shape of the entries read."""

    clamp: str
    log: str
    clipped: int
    read: int
    low: float | None
    high: float | None
    shape: tuple[int, ...]


def _saved(node: Any, attr: str) -> Any:
    return saved_value(node, attr, hooked=False)


def _bound(node: Any, attr: str) -> Any:
    b = _saved(node, attr)
    if isinstance(b, torch.Tensor):
        return b.detach()
    return float(b) if isinstance(b, (int, float)) else None


def _pick(mask: torch.Tensor, node: Any) -> torch.Tensor | None:
    """``mask`` (the clamp's clipped entries, propagated so far) picked as ``node`` picked
    its input; ``None`` where that cannot be read."""
    name = type(node).__name__
    if name == "IndexBackward0":
        idx = _saved(node, "_saved_indices")
        if not isinstance(idx, (tuple, list)):
            return None
        return mask[tuple(slice(None) if i is None else i for i in idx)]
    if name == "GatherBackward0":
        dim, index = _saved(node, "_saved_dim"), _saved(node, "_saved_index")
        return mask.gather(dim, index) if isinstance(index, torch.Tensor) else None
    if name == "SelectBackward0":
        dim, i = _saved(node, "_saved_dim"), _saved(node, "_saved_index")
        return mask.select(dim, i) if isinstance(dim, int) and isinstance(i, int) else None
    dim, start, end, step = (_saved(node, a) for a in
                             ("_saved_dim", "_saved_start", "_saved_end", "_saved_step"))
    if not all(isinstance(v, int) for v in (dim, step)):
        return None
    size = mask.shape[dim]
    start = 0 if start is None else start
    end = size if end is None else end
    return mask[(slice(None),) * (dim % mask.dim()) + (slice(start, end, step),)]


def weights_of(node: Any, parents: list[Any]) -> torch.Tensor | None:
    """Where the log ``node``'s output is kept: ``True`` where some product in ``parents`` (the
    nodes that take the log's output) multiplies it by a nonzero saved weight; ``None`` unless
    every parent is such a product (``MulBackward0`` with the other factor saved, a tensor)."""
    kept = None
    for parent in parents:
        if type(parent).__name__ != "MulBackward0":
            return None
        slots = [i for i, (c, _) in enumerate(parent.next_functions) if c is node]
        if len(slots) != 1:
            return None
        weight = _saved(parent, "_saved_self" if slots[0] == 1 else "_saved_other")
        if not isinstance(weight, torch.Tensor):
            return None
        nonzero = weight.detach() != 0
        kept = nonzero if kept is None else kept | nonzero
    return kept


def clipped_before_log(node: Any, kept: torch.Tensor | None = None) -> Clipped | None:
    """For a log node (:data:`LOGS`) whose input was a clamp (:data:`CLAMPS`) reached through at
    most :data:`STEPS` views and picks, the entries the log read that the clamp clipped;
    ``None`` when ``node`` is no such log, nothing read was clipped, or the saved values
    cannot be read (saved-tensor hooks are not run).  ``kept`` (:func:`weights_of`), where
    given and broadcastable to the log's output: only the entries it keeps are counted."""
    if type(node).__name__ not in LOGS:
        return None
    picks, n = [], node.next_functions[0][0] if node.next_functions else None
    for _ in range(STEPS + 1):
        name = type(n).__name__
        if n is None or name in CLAMPS:
            break
        if name not in _KEEP + _PICK:
            return None
        if name in _PICK:
            picks.append(n)
        n = n.next_functions[0][0] if n.next_functions else None
    if n is None or type(n).__name__ not in CLAMPS:
        return None
    x = _saved(n, "_saved_self")
    if not isinstance(x, torch.Tensor) or not x.is_floating_point() or x.numel() > 1 << 24:
        return None
    x = x.detach()
    low = _bound(n, "_saved_min") if type(n).__name__ != "ClampMaxBackward0" else None
    high = _bound(n, "_saved_max") if type(n).__name__ != "ClampMinBackward0" else None
    mask = torch.zeros_like(x, dtype=torch.bool)
    if low is not None:
        mask |= x < low
    if high is not None:
        mask |= x > high
    try:
        for p in reversed(picks):  # in the forward's order
            picked = _pick(mask, p)
            if picked is None:
                return None
            mask = picked
        if kept is not None:
            keep = torch.broadcast_to(kept, mask.shape)
            return _clipped(n, node, mask[keep], low, high, tuple(mask.shape))
    except (IndexError, RuntimeError, TypeError):
        return None
    return _clipped(n, node, mask, low, high, tuple(mask.shape))


def _clipped(n: Any, node: Any, mask: torch.Tensor, low: Any, high: Any,
             shape: tuple[int, ...]) -> Clipped | None:
    clipped = int(mask.sum())
    if not clipped:
        return None
    return Clipped(type(n).__name__, type(node).__name__, clipped, mask.numel(),
                   None if isinstance(low, torch.Tensor) else low,
                   None if isinstance(high, torch.Tensor) else high, shape)
