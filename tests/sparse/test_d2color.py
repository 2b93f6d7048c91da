"""Distance-2 colouring on the pattern's CSR/CSC arrays (no conflict graph), dense lines peeled
first: valid against brute force, the same largest-first colouring as networkx, and never
more colours or passes than the former explicit-graph colourings on the shared problems."""

from __future__ import annotations

import subprocess
import sys

import networkx as nx
import numpy as np
import pytest
import rustworkx as rx
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from problems import brusselator, stencil_1d, stencil_2d

import gradarg
from gradarg.sparse import d2color
from gradarg.sparse.bidirectional import bidirectional_partition
from gradarg.sparse.coloring import conflict_adjacency
from gradarg.sparse.pattern import Coordinates, coordinates
from gradarg.sparse.peel import candidate_splits, split_bound

F64 = torch.float64


@st.composite
def masks(draw, max_side=16):
    m = draw(st.integers(1, max_side))
    n = draw(st.integers(1, max_side))
    density = draw(st.floats(0.02, 0.7))
    seed = draw(st.integers(0, 2**31 - 1))
    mask = torch.rand(m, n, generator=torch.Generator().manual_seed(seed)) < density
    mask[draw(st.integers(0, m - 1)), draw(st.integers(0, n - 1))] = True
    return mask


def same_coloured_conflict(mask: torch.Tensor, side: str, colors: np.ndarray):
    """Brute force: two same-coloured rows sharing a column (or columns sharing a row)."""
    p = mask.to(torch.int64)
    overlap = (p @ p.T if side == "rows" else p.T @ p).numpy()
    a, b = np.nonzero(overlap)
    bad = (a < b) & (colors[a] == colors[b])
    return (int(a[bad][0]), int(b[bad][0])) if bad.any() else None


@settings(max_examples=40, deadline=None)
@given(mask=masks(), side=st.sampled_from(("rows", "columns")))
def test_distance2_colourings_are_valid_and_largest_first_is_networkx(mask, side):
    co = coordinates(mask)
    arrays = d2color.bipartite(co, side)
    size = co.m if side == "rows" else co.n
    for strategy in ("best", *d2color.BEST_OF):
        colors, _ = d2color.color_bipartite(*arrays, strategy)
        assert colors.shape == (size,)
        assert same_coloured_conflict(mask, side, colors) is None, strategy
    indptr, indices = conflict_adjacency(co, side)
    degree = d2color._degrees(*arrays)
    assert np.array_equal(degree, np.diff(indptr))
    # DSATUR's binary-heap version (used past one bucket per key) is a valid colouring too
    assert same_coloured_conflict(mask, side, d2color._dsatur(*arrays, degree)) is None
    graph = nx.Graph()
    graph.add_nodes_from(range(size))
    graph.add_edges_from((a, b) for a in range(size) for b in indices[indptr[a]:indptr[a + 1]])
    want = nx.greedy_color(graph, strategy="largest_first")
    got, _ = d2color.color_bipartite(*arrays, "largest_first")
    assert got.tolist() == [want[v] for v in range(size)]


def grid_pattern(f, shape, dense_row=False, dense_col=False) -> torch.Tensor:
    x = torch.rand(shape, generator=torch.Generator().manual_seed(0), dtype=F64)
    p = gradarg.sparsity_pattern(f, x).reshape(-1, x.numel())
    if dense_row:
        p = torch.cat([p, torch.ones(1, p.shape[1], dtype=torch.bool)])
    if dense_col:
        p[:, 0] = True
    return p


def former_best(indptr, indices):
    """The former ``"best"``: the fewer colours of rustworkx's largest-first and DSATUR on the
    explicit conflict graph ``(indptr, indices)`` (largest-first on a tie)."""
    size = len(indptr) - 1
    row = np.repeat(np.arange(size), np.diff(indptr))
    keep = row < indices
    graph = rx.PyGraph()
    graph.add_nodes_from(range(size))
    graph.add_edges_from_no_data(list(zip(row[keep].tolist(), indices[keep].tolist(),
                                          strict=True)))
    best = None
    for strategy in (rx.ColoringStrategy.Degree, rx.ColoringStrategy.Saturation):
        found = rx.graph_greedy_color(graph, strategy=strategy)
        colors = np.empty(size, dtype=np.int64)
        colors[list(found)] = list(found.values())
        if best is None or colors.max() < best.max():
            best = colors
    return best


def former_split_passes(co) -> int:
    """Passes of the former bidirectional search: every candidate split, each side coloured by
    :func:`former_best` on its explicit conflict graph; the fewest in total."""
    def colours(keep, side):
        if not keep.any():
            return 0
        sub = Coordinates(co.rows[keep], co.cols[keep], co.m, co.n, None, None)
        colors = former_best(*conflict_adjacency(sub, side))
        return np.unique(colors[sub.rows if side == "rows" else sub.cols]).size

    splits = [rev for rev, _ in candidate_splits(co)] or [np.ones(co.nnz, dtype=bool)]
    return min(colours(rev, "rows") + colours(~rev, "columns") for rev in splits)


PROBLEMS = {
    "stencil_1d": lambda: grid_pattern(stencil_1d, (40,)),
    "stencil_2d": lambda: grid_pattern(stencil_2d, (9, 9)),
    "brusselator": lambda: grid_pattern(brusselator, (2, 8, 8)),
    "stencil_1d + mean row": lambda: grid_pattern(stencil_1d, (60,), dense_row=True),
    "+ dense column": lambda: grid_pattern(stencil_1d, (60,), dense_row=True, dense_col=True),
    "stencil_2d + dense row and column": lambda: grid_pattern(
        stencil_2d, (8, 8), dense_row=True, dense_col=True),
}


@pytest.mark.parametrize("name", sorted(PROBLEMS))
def test_never_more_colours_or_passes_than_the_explicit_graph(name):
    mask = PROBLEMS[name]()
    co = coordinates(mask)
    for side in ("rows", "columns"):
        old = former_best(*conflict_adjacency(co, side))
        new = gradarg.color_pattern(mask, side).numpy()
        assert same_coloured_conflict(mask, side, new) is None
        assert new.max() <= old.max(), side
    old_split = former_split_passes(co)
    new_split = bidirectional_partition(co)
    assert new_split.passes <= old_split
    assert new_split.passes >= min((b for _, b in candidate_splits(co)), default=0)


@settings(max_examples=30, deadline=None)
@given(mask=masks(max_side=12), dense_row=st.booleans(), dense_col=st.booleans())
def test_peeled_split_is_a_valid_partition_within_its_bound(mask, dense_row, dense_col):
    mask = mask.clone()
    if dense_row:
        mask[0] = True
    if dense_col:
        mask[:, -1] = True
    co = coordinates(mask)
    part = bidirectional_partition(co)
    rev = part.reverse
    assert part.passes >= split_bound(co, rev)
    sub_rows = torch.zeros_like(mask)
    sub_rows[co.rows[rev], co.cols[rev]] = True
    sub_cols = mask & ~sub_rows
    assert same_coloured_conflict(sub_rows, "rows", part.row_colors) is None
    assert same_coloured_conflict(sub_cols, "columns", part.column_colors) is None
    explicit = former_split_passes(co)
    assert part.passes <= explicit + 1  # DSATUR ties are broken differently


def test_a_dense_row_is_peeled_before_any_colouring():
    n = 2000
    i = torch.arange(n)
    p = torch.cat([(i[:, None] - i[None, :]).abs() <= 1, torch.ones(1, n, dtype=torch.bool)])
    sj = gradarg.SparseJacobian(p)
    # the columns (all in conflict through the dense row) are never coloured; the rows need
    # as many passes as the split, and a tie goes to one side (one forward pass fewer)
    assert (sj.mode, sj.passes, sj.column_colors, sj.row_colors) == ("reverse", 4, None, 4)
    assert gradarg.SparseJacobian(p, method="bidirectional").passes == 4
    p[:, 0] = True  # and a dense column: neither side is coloured
    sj = gradarg.SparseJacobian(p)
    assert (sj.mode, sj.passes, sj.row_colors, sj.column_colors) == ("bidirectional", 5,
                                                                      None, None)


def test_import_gradarg_does_not_import_numba():
    code = "import sys, gradarg, gradarg.sparse; print('numba' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


# --------------------------------------------------------------------------- compiled loops


def reference_star_coloring(indptr, indices, sequence):
    """The former pure-Python star colouring (same rule), for the compiled one to equal."""
    n = len(indptr) - 1
    ptr, ind = indptr.tolist(), indices.tolist()
    color = [-1] * n
    counts: list[dict[int, int]] = [{} for _ in range(n)]
    forbid = [-1] * (n + 1)
    for v in sequence.tolist():
        for w in ind[ptr[v] : ptr[v + 1]]:
            a = color[w]
            if a < 0:
                continue
            forbid[a] = v
            hub = counts[v].get(a, 0) >= 2
            for x in ind[ptr[w] : ptr[w + 1]]:
                if color[x] >= 0 and x != v and (hub or counts[x].get(a, 0) >= 2):
                    forbid[color[x]] = v
        c = 0
        while forbid[c] == v:
            c += 1
        color[v] = c
        for z in ind[ptr[v] : ptr[v + 1]]:
            counts[z][c] = counts[z].get(c, 0) + 1
    return np.asarray(color, dtype=np.int64)


def reference_acyclic_coloring(indptr, indices, sequence):
    """The former pure-Python acyclic colouring (union-find per colour pair, in dicts)."""
    ptr, ind = indptr.tolist(), indices.tolist()
    color = [-1] * (len(ptr) - 1)
    forests: dict[tuple[int, int], dict[int, int]] = {}

    def find(parent, v):
        while parent.get(v, v) != v:
            v = parent[v]
        return v

    for v in sequence.tolist():
        by_colour: dict[int, list[int]] = {}
        for w in ind[ptr[v] : ptr[v + 1]]:
            if color[w] >= 0:
                by_colour.setdefault(color[w], []).append(w)
        c = 0
        while c in by_colour or any(
            len({find(forests.get((min(c, d), max(c, d)), {}), w) for w in ws}) < len(ws)
            for d, ws in by_colour.items()
        ):
            c += 1
        color[v] = c
        for d, ws in by_colour.items():
            parent = forests.setdefault((min(c, d), max(c, d)), {})
            for w in ws:
                parent[find(parent, w)] = find(parent, v)
    return np.asarray(color, dtype=np.int64)


def reference_greedy(indptr, indices, sequence):
    color = [-1] * (len(indptr) - 1)
    for v in sequence.tolist():
        taken = {color[w] for w in indices[indptr[v] : indptr[v + 1]].tolist()}
        color[v] = next(c for c in range(len(color) + 1) if c not in taken)
    return np.asarray(color, dtype=np.int64)


@settings(max_examples=40, deadline=None)
@given(n=st.integers(1, 30), density=st.floats(0.02, 0.5), seed=st.integers(0, 2**31 - 1))
def test_compiled_star_acyclic_and_greedy_colourings_equal_the_python_ones(n, density, seed):
    from gradarg.sparse.acyclic import acyclic_coloring
    from gradarg.sparse.greedy import ORDERS, greedy, order
    from gradarg.sparse.star import star_coloring

    rng = np.random.default_rng(seed)
    a = rng.random((n, n)) < density
    a = (a | a.T) & ~np.eye(n, dtype=bool)
    indptr = np.r_[0, np.cumsum(a.sum(1))].astype(np.int64)
    indices = np.nonzero(a)[1].astype(np.int64)
    for name in ORDERS:
        seq = order(indptr, indices, name)
        assert sorted(seq.tolist()) == list(range(n))
        assert np.array_equal(greedy(indptr, indices, seq), reference_greedy(indptr, indices, seq))
        assert np.array_equal(star_coloring(indptr, indices, seq),
                              reference_star_coloring(indptr, indices, seq))
        assert np.array_equal(acyclic_coloring(indptr, indices, seq),
                              reference_acyclic_coloring(indptr, indices, seq))


@settings(max_examples=30, deadline=None)
@given(mask=masks(max_side=20).filter(lambda m: m.shape[0] == m.shape[1]) | st.builds(
    lambda k, seed: torch.rand(k, k, generator=torch.Generator().manual_seed(seed)) < 0.2,
    st.integers(1, 20), st.integers(0, 2**31 - 1)).filter(lambda m: bool(m.any())))
def test_symmetrized_pattern_is_the_union_with_transpose_and_diagonal(mask):
    from gradarg.sparse.symmetric import symmetrized

    rows, cols, indptr, indices = symmetrized(coordinates(mask))
    sym = (mask | mask.T).numpy()
    np.fill_diagonal(sym, True)
    want_rows, want_cols = np.nonzero(sym)
    assert np.array_equal(rows, want_rows) and np.array_equal(cols, want_cols)
    off = sym & ~np.eye(len(sym), dtype=bool)
    assert np.array_equal(indptr, np.r_[0, np.cumsum(off.sum(1))])
    assert np.array_equal(indices, np.nonzero(off)[1])
