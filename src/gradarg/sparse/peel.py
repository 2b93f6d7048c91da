"""Dense rows and columns, peeled off before any colouring: the candidate bidirectional splits.

A row with many entries makes every pair of its columns conflict (forward mode needs as many
passes as it has entries); peeled to reverse mode, it costs one VJP colour among the few dense
rows, and the columns are coloured without it.  Columns peeled to forward mode likewise.  For
a few thresholds ``t`` on the entries per line (the :data:`THRESHOLDS` largest distinct counts),
rows with at least ``t`` entries go to reverse mode, or columns with at least ``t`` to forward
mode.  Each candidate comes with a lower bound on its passes, found by counting only: the
reverse rows need at least as many colours as one column has reverse entries, the forward
columns as many as one row has forward entries.  :func:`gradarg.sparse.bidirectional.
bidirectional_partition` colours the candidates in increasing bound and stops when the bound
reaches the best split found, so a candidate that keeps a dense line (quadratic work, as
many colours as its entries) is never coloured once a better split is known.
"""

from __future__ import annotations

import numpy as np

from .pattern import Coordinates, sorted_unique

__all__ = ["THRESHOLDS", "candidate_splits", "split_bound"]

THRESHOLDS = 4  # cut-offs tried on each side


def split_bound(coords: Coordinates, reverse: np.ndarray) -> int:
    """Least passes of the split ``reverse`` (entries to VJPs; the others to JVPs)."""
    rev = np.bincount(coords.cols[reverse], minlength=1).max(initial=0)
    fwd = np.bincount(coords.rows[~reverse], minlength=1).max(initial=0)
    return int(rev + fwd)


def candidate_splits(coords: Coordinates) -> list[tuple[np.ndarray, int]]:
    """``(reverse, bound)`` per candidate split, rows peeled first, then columns, each side by
    decreasing threshold; splits that would peel every entry are left out."""
    out = []
    for side in ("rows", "columns"):
        line = coords.rows if side == "rows" else coords.cols
        size = coords.m if side == "rows" else coords.n
        nnz = np.bincount(line, minlength=size)
        for t in sorted_unique(nnz)[::-1][:THRESHOLDS]:  # np.unique: slower, imports numpy.ma
            peeled = nnz[line] >= t  # entries on a dense line
            if peeled.all():
                continue
            reverse = peeled if side == "rows" else ~peeled
            out.append((reverse, split_bound(coords, reverse)))
    return out
