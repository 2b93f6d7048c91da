"""Bidirectional partition: a few dense rows by reverse mode, the rest by forward mode.

One dense row makes every pair of columns conflict (forward mode needs ``n`` passes); one
dense column makes every pair of rows conflict (reverse mode needs ``m``).  An arrowhead
(dense first row and column) needs ``n`` passes on either side alone, but three together: the
dense row by one VJP, the other rows' entries by two JVPs (column 0, then all other columns
at once, since once row 0 is set aside they share no row).

This is a simple *peeling* heuristic in the spirit of the bidirectional partitions of Coleman
and Verma ("The efficient computation of sparse Jacobian matrices using automatic
differentiation", SIAM J. Sci. Comput. 19, 1998) and Hossain and Steihaug (1998): the
candidate splits of ``gradarg.sparse.peel`` (dense rows to reverse mode, or dense columns
to forward mode, for a few thresholds) are coloured in increasing lower bound (reverse rows
coloured among themselves: rows sharing a column conflict; forward columns: columns sharing a
row *outside* the peeled rows conflict), through the pattern's CSR/CSC arrays
(``gradarg.sparse.d2color``), until the bound reaches the best split found.  The split
with the fewest passes in total is kept.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .coloring import Side, color_pattern
from .pattern import Coordinates, sorted_unique
from .peel import candidate_splits

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


def _colors(coords: Coordinates, keep: np.ndarray, side: Side, strategy: str):
    size = coords.m if side == "rows" else coords.n
    if not keep.any():
        return np.zeros(size, dtype=np.int64), 0
    sub = Coordinates(coords.rows[keep], coords.cols[keep], coords.m, coords.n, None, None)
    colors = color_pattern(sub, side, strategy=strategy).numpy()
    used = sorted_unique(colors[sub.rows if side == "rows" else sub.cols])
    # renumber the colours that entries use as 0, 1, ... (isolated absent nodes may hold others)
    table = np.full(int(colors.max()) + 1, 0, dtype=np.int64)
    table[used] = np.arange(used.size)
    return table[colors], int(used.size)


def bidirectional_partition(coords: Coordinates, strategy: str = "best") -> Partition:
    """The peeling split with fewest passes over the candidates of
    :func:`gradarg.sparse.peel.candidate_splits`."""
    best: Partition | None = None
    candidates = candidate_splits(coords)
    candidates.sort(key=lambda c: c[1])  # stable: rows first on equal bounds
    for rev, bound in candidates:
        if best is not None and bound >= best.passes:
            break
        rc, kr = _colors(coords, rev, "rows", strategy)
        cc, kc = _colors(coords, ~rev, "columns", strategy)
        if best is None or kr + kc < best.passes:
            best = Partition(rev, rc, cc, kr, kc)
    if best is None:  # every line equally dense: all entries to reverse mode
        rev = np.ones(coords.nnz, dtype=bool)
        rc, kr = _colors(coords, rev, "rows", strategy)
        best = Partition(rev, rc, np.zeros(coords.n, dtype=np.int64), kr, 0)
    return best
