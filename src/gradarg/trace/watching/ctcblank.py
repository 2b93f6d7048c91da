"""CTC targets that hold the blank index.

``ctc_loss`` reserves one class, ``blank`` (0 by default), for "no label here"; a target
sequence that holds it (labels numbered from 0 while the blank is 0) asks for an alignment
that can never decode to it: every path that emits the blank at a position reads as nothing
there.  The loss stays finite and every gradient finite and nonzero, so the model trains
towards something else than the labels
(https://docs.pytorch.org/docs/stable/generated/torch.nn.CTCLoss.html).

Seen here, at each outermost ``backward()``: a ``ctc_loss`` node among the loss's first nodes
(``_saved_targets``, ``_saved_target_lengths``, ``_saved_blank``); the target positions within
each sequence's length that equal the blank are counted.

Read by :class:`.lossnodes.LossNodes` (:data:`NODE`, :func:`read`). Imports :mod:`.finding`
and ``trace.graph`` only.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NamedTuple

import torch

from ..graph.nodes import saved_value
from .finding import Finding, Options

if TYPE_CHECKING:
    from .watch import GradWatch

__all__ = ["NODE", "Blanks", "blank_targets", "read"]

NODE = "CtcLossBackward0"
"""The loss node read (its saved values)."""


class Blanks(NamedTuple):
    """``positions`` of the ``labels`` target positions (within their lengths) of
    ``sequences`` target sequences equal the blank index ``blank``, in ``hit`` sequences."""

    blank: int
    positions: int
    labels: int
    hit: int
    sequences: int


def read(node: Any) -> Blanks | None:
    targets = saved_value(node, "_saved_targets", hooked=False)
    lengths = saved_value(node, "_saved_target_lengths", hooked=False)
    blank = saved_value(node, "_saved_blank", hooked=False)
    if not (isinstance(targets, torch.Tensor) and isinstance(blank, int) and lengths is not None):
        return None
    lengths = [int(n) for n in lengths]
    if targets.dim() == 2:  # padded (N, S): the first lengths[i] of each row count
        rows = [targets[i, :n] for i, n in enumerate(lengths)]
    else:  # concatenated (sum(lengths),)
        rows = list(torch.split(targets, lengths))
    hits = [int((r == blank).sum()) for r in rows]
    if not any(hits):
        return None
    return Blanks(blank, sum(hits), sum(lengths), sum(1 for h in hits if h), len(rows))


def blank_targets(w: GradWatch, o: Options) -> Finding:
    """CTC targets holding the blank index."""
    b = w.lossnodes.found.get("ctc")
    if b is None:
        return Finding("CTC targets", True)
    return Finding("CTC targets", True, (
        f"{b.positions} of the {b.labels} target labels of ctc_loss ({b.hit} of {b.sequences} "
        f"sequences) equal its blank index {b.blank} (read from the graph at the backward "
        f"call): the blank means 'no label', so those targets can never be decoded and the "
        f"model is trained towards other alignments; number the labels from "
        f"{b.blank + 1 if b.blank == 0 else 0} (or set blank= to an index no label uses)"))
