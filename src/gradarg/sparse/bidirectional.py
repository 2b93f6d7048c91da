"""Bidirectional partition: a few dense rows by reverse mode, the rest by forward mode.

One dense row makes every pair of columns conflict (forward mode needs ``n`` passes); one
dense column makes every pair of rows conflict (reverse mode needs ``m``).  An arrowhead
(dense first row and column) needs ``n`` passes on either side alone, but three together: the
dense row by one VJP, the other rows' entries by two JVPs (column 0, then all other columns
at once, since once row 0 is set aside they share no row).

This is a simple *peeling* heuristic in the spirit of the bidirectional partitions of Coleman
and Verma ("The efficient computation of sparse Jacobian matrices using automatic
differentiation", SIAM J. Sci. Comput. 19, 1998) and Hossain and Steihaug (1998): for a few
thresholds ``t`` on the number of non-zeros, rows with at least ``t`` entries go to reverse mode
(their rows coloured among themselves: rows sharing a column conflict) and the remaining
entries to forward mode (their columns coloured: columns sharing a row *outside* the peeled
rows conflict); the same with columns peeled to forward mode.  The split with the fewest
passes in total is kept.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .coloring import color_graph, conflict_adjacency
from .pattern import Coordinates

__all__ = ["Partition", "bidirectional_partition"]


@dataclass(frozen=True)
class Partition:
    """Entries ``reverse[k]`` come from VJPs, the others from JVPs."""

    reverse: np.ndarray  # bool per pattern entry
    row_colors: np.ndarray  # int64 per row (meaningful for rows with reverse entries)
    column_colors: np.ndarray  # int64 per column (meaningful for columns with forward entries)
    reverse_passes: int
    forward_passes: int

    @property
    def passes(self) -> int:
        return self.reverse_passes + self.forward_passes


def _colors(coords: Coordinates, keep: np.ndarray, side: str, strategy: str):
    size = coords.m if side == "rows" else coords.n
    if not keep.any():
        return np.zeros(size, dtype=np.int64), 0
    sub = Coordinates(coords.rows[keep], coords.cols[keep], coords.m, coords.n, None, None)
    colors, _ = color_graph(*conflict_adjacency(sub, side), strategy)
    used = np.unique(colors[sub.rows if side == "rows" else sub.cols])
    # renumber the colours that entries use as 0, 1, ... (isolated absent nodes may hold others)
    table = np.full(int(colors.max()) + 1, 0, dtype=np.int64)
    table[used] = np.arange(used.size)
    return table[colors], int(used.size)


def bidirectional_partition(
    coords: Coordinates, strategy: str = "best", thresholds: int = 4
) -> Partition:
    """The peeling split with fewest passes over ``thresholds`` cut-offs on each side."""
    best: Partition | None = None
    for side in ("rows", "columns"):
        line = coords.rows if side == "rows" else coords.cols
        size = coords.m if side == "rows" else coords.n
        nnz = np.bincount(line, minlength=size)
        for t in np.unique(nnz)[::-1][:thresholds]:
            peeled = nnz[line] >= t  # entries on a dense line
            if peeled.all():
                continue
            rev = peeled if side == "rows" else ~peeled
            rc, kr = _colors(coords, rev, "rows", strategy)
            cc, kc = _colors(coords, ~rev, "columns", strategy)
            if best is None or kr + kc < best.passes:
                best = Partition(rev, rc, cc, kr, kc)
    if best is None:  # every line equally dense: all entries to reverse mode
        rev = np.ones(coords.nnz, dtype=bool)
        rc, kr = _colors(coords, rev, "rows", strategy)
        best = Partition(rev, rc, np.zeros(coords.n, dtype=np.int64), kr, 0)
    return best
