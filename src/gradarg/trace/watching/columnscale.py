"""A regression loss over several output columns whose targets have very different scales
(a price in thousands beside a ratio near 1): one column makes nearly all of the loss, so its
gradient trains the shared layers for that column and barely for the others.  Read from the
input and target a regression loss node saved (``mse_loss``, ``l1_loss``, ``smooth_l1_loss``,
``huber_loss``) at the ``backward()`` call: each column's share of the elementwise loss summed
over the rows, and each target column's root mean square.

Imports :func:`gradarg.trace.graph.nodes.saved_value` only.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import torch
from torch.nn import functional as F

from ..graph.nodes import saved_value

__all__ = ["LOSSES", "Dominant", "dominant_column"]

LOSSES = {"MseLossBackward0": "mse_loss", "L1LossBackward0": "l1_loss",
          "SmoothL1LossBackward0": "smooth_l1_loss", "HuberLossBackward0": "huber_loss"}
SHARE = 0.9  # a column's share of the loss from which it dominates
SCALES = 10.0  # and its targets' root mean square against the smallest column's
COLUMNS = 64  # at most this many output columns read
ROWS = 1 << 16  # rows read


class Dominant(NamedTuple):
    """Column ``column`` of ``columns`` makes ``share`` of the loss ``loss``; its targets'
    root mean square is ``ratio`` times the smallest column's."""

    loss: str
    column: int
    columns: int
    share: float
    ratio: float


def _elementwise(node: Any, name: str, x: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
    """The loss of each entry (``reduction='none'``), with the node's saved beta or delta."""
    if name == "SmoothL1LossBackward0":
        beta = saved_value(node, "_saved_beta", hooked=False)
        return F.smooth_l1_loss(x, t, reduction="none", beta=float(beta or 0.0))
    if name == "HuberLossBackward0":
        delta = saved_value(node, "_saved_delta", hooked=False)
        return F.huber_loss(x, t, reduction="none", delta=float(delta or 1.0))
    return (x - t).abs() if name == "L1LossBackward0" else (x - t).pow(2)


def dominant_column(node: Any) -> Dominant | None:
    """The column of a regression loss's saved input that makes at least :data:`SHARE` of
    the loss while its targets' scale is :data:`SCALES` times another column's; ``None``
    otherwise (one column, shapes that differ: a broadcast is :mod:`.lossforms`')."""
    name = type(node).__name__
    x, t = (saved_value(node, a, hooked=False) for a in ("_saved_self", "_saved_target"))
    if (name not in LOSSES or not isinstance(x, torch.Tensor) or not isinstance(t, torch.Tensor)
            or x.shape != t.shape or x.dim() < 2 or not 2 <= x.shape[-1] <= COLUMNS
            or not x.is_floating_point()):
        return None
    xs = x.detach().reshape(-1, x.shape[-1])[:ROWS].double()
    ts = t.detach().reshape(-1, t.shape[-1])[:ROWS].double()
    per = _elementwise(node, name, xs, ts).sum(0)
    total = float(per.sum())
    scale = ts.pow(2).mean(0).sqrt()
    if not total > 0 or not bool(torch.isfinite(per).all()) or float(scale.min()) == 0:
        return None
    k = int(per.argmax())
    share, ratio = float(per[k]) / total, float(scale[k] / scale.min())
    if share < SHARE or ratio < SCALES:
        return None
    return Dominant(LOSSES[name], k, x.shape[-1], share, ratio)
