"""Colourings (every strategy), star colouring, sparse Hessians and bidirectional splits,
each against brute force: conflict sets from dense products, P4 paths enumerated, Hessians
from ``torch.func.hessian``, Jacobians from ``torch.func.jacrev``."""

from __future__ import annotations

import itertools

import networkx as nx
import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from problems import band_energy

import gradarg
from gradarg.sparse.bidirectional import bidirectional_partition
from gradarg.sparse.coloring import STRATEGIES
from gradarg.sparse.pattern import coordinates
from gradarg.sparse.star import star_coloring, star_recovery

F64 = torch.float64


@st.composite
def masks(draw, max_side=14):
    m = draw(st.integers(1, max_side))
    n = draw(st.integers(1, max_side))
    density = draw(st.floats(0.05, 0.6))
    seed = draw(st.integers(0, 2**31 - 1))
    mask = torch.rand(m, n, generator=torch.Generator().manual_seed(seed)) < density
    mask[draw(st.integers(0, m - 1)), draw(st.integers(0, n - 1))] = True
    return mask


def conflicts(mask: torch.Tensor, side: str) -> set[tuple[int, int]]:
    p = mask.to(torch.int64)
    overlap = (p @ p.T if side == "rows" else p.T @ p).numpy()
    return {(a, b) for a, b in zip(*np.nonzero(overlap), strict=True) if a < b}


@settings(max_examples=20, deadline=None)
@given(mask=masks(), side=st.sampled_from(("rows", "columns")))
def test_every_strategy_is_proper_and_best_never_beaten_by_networkx(mask, side):
    pairs = conflicts(mask, side)
    size = mask.shape[0] if side == "rows" else mask.shape[1]
    for strategy in STRATEGIES:
        colors = gradarg.color_pattern(mask, side, strategy=strategy)
        assert colors.shape == (size,)
        assert all(colors[a] != colors[b] for a, b in pairs), strategy
    graph = nx.Graph()
    graph.add_nodes_from(range(size))
    graph.add_edges_from(sorted(pairs))
    lf = max(nx.greedy_color(graph, strategy="largest_first").values()) + 1
    assert int(gradarg.color_pattern(mask, side).max()) + 1 <= lf


def test_random_sequential_runs_and_is_reproducible():
    mask = torch.rand(30, 30, generator=torch.Generator().manual_seed(0)) < 0.2
    a = gradarg.color_pattern(mask, strategy="random_sequential")
    b = gradarg.color_pattern(mask, strategy="random_sequential")
    assert torch.equal(a, b)


def test_dsatur_finds_the_optimum_on_a_2d_stencil():
    s = 16  # 5-point stencil: 5 colours are needed (a row's 5 entries) and DSATUR finds 5
    a = torch.arange(s)
    di = (a[:, None, None, None] - a[None, None, :, None]).abs()
    dj = (a[None, :, None, None] - a[None, None, None, :]).abs()
    pattern = di + dj <= 1
    got = gradarg.color_pattern(pattern, x_shape=(s, s))
    assert int(got.max()) + 1 == 5
    largest_first = gradarg.color_pattern(pattern, x_shape=(s, s), strategy="largest_first")
    assert int(largest_first.max()) + 1 > 5  # what "best" improves on here


def test_unknown_strategy_raises():
    with pytest.raises(ValueError, match="strategy must be one of"):
        gradarg.color_pattern(torch.eye(3, dtype=torch.bool), strategy="dsatur")


# --------------------------------------------------------------------------- star colouring


def symmetric(mask: torch.Tensor) -> torch.Tensor:
    sym = mask | mask.T
    sym.fill_diagonal_(True)
    return sym


def adjacency(sym: np.ndarray):
    off = sym & ~np.eye(len(sym), dtype=bool)
    indptr = np.r_[0, np.cumsum(off.sum(1))].astype(np.int64)
    return indptr, np.nonzero(off)[1].astype(np.int64)


def bicoloured_p4(sym: np.ndarray, colors: np.ndarray) -> tuple[int, ...] | None:
    off = sym & ~np.eye(len(sym), dtype=bool)
    nbr = [np.flatnonzero(r).tolist() for r in off]
    for v, w in zip(*np.nonzero(off), strict=True):
        for x in nbr[w]:
            if x == v:
                continue
            for y in nbr[x]:
                if y in (v, w):
                    continue
                if colors[v] == colors[x] and colors[w] == colors[y]:
                    return (v, w, x, y)
    return None


@settings(max_examples=40, deadline=None)
@given(mask=masks(max_side=12).filter(lambda m: m.shape[0] == m.shape[1]) | st.builds(
    lambda k, seed: torch.rand(k, k, generator=torch.Generator().manual_seed(seed)) < 0.3,
    st.integers(2, 12), st.integers(0, 2**31 - 1)))
def test_star_colouring_has_no_bicoloured_path_and_recovers_directly(mask):
    sym = symmetric(mask).numpy()
    indptr, indices = adjacency(sym)
    order = np.random.default_rng(0).permutation(len(sym))
    colors = star_coloring(indptr, indices, order)
    off = sym & ~np.eye(len(sym), dtype=bool)
    assert all(colors[a] != colors[b] for a, b in zip(*np.nonzero(off), strict=True))
    assert bicoloured_p4(sym, colors) is None
    rows, cols = np.nonzero(sym)
    star_recovery(rows.astype(np.int64), cols.astype(np.int64), colors)  # raises if not


def test_star_recovery_rejects_a_distance1_colouring_of_a_path():
    sym = symmetric(torch.tensor([[0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1], [0, 0, 0, 0]],
                                 dtype=torch.bool)).numpy()
    rows, cols = (a.astype(np.int64) for a in np.nonzero(sym))
    with pytest.raises(ValueError, match="not a star colouring"):
        star_recovery(rows, cols, np.array([0, 1, 0, 1]))  # a bicoloured P4


# --------------------------------------------------------------------------- Hessians


def banded(n: int, half: int) -> torch.Tensor:
    i = torch.arange(n)
    return (i[:, None] - i[None, :]).abs() <= half


@pytest.mark.parametrize("layout", [torch.sparse_coo, torch.sparse_csr, torch.strided])
def test_banded_hessian_is_exact_in_eleven_products(layout):
    n, half = 40, 5  # 10 off-diagonal bands
    sh = gradarg.SparseHessian(banded(n, half).to_sparse())
    assert sh.passes <= 2 * half + 1
    x = torch.randn(n, generator=torch.Generator().manual_seed(0), dtype=F64)
    f = band_energy(half)
    got = sh(f, x, layout=layout)
    got = got if layout == torch.strided else got.to_dense()
    torch.testing.assert_close(got, torch.func.hessian(f)(x), rtol=1e-12, atol=1e-300)


def test_energy_on_a_grid_with_x_shape():
    s = 7

    def energy(u):  # sum of local terms: neighbours in both directions
        across = ((u[1:] - u[:-1]) ** 4).sum()
        along = ((u[:, 1:] - u[:, :-1]) ** 4).sum()
        return across + along + u.exp().sum()

    a = torch.arange(s)
    di = (a[:, None, None, None] - a[None, None, :, None]).abs()
    dj = (a[None, :, None, None] - a[None, None, None, :]).abs()
    sh = gradarg.SparseHessian(di + dj <= 1, (s, s))
    x = torch.randn(s, s, generator=torch.Generator().manual_seed(1), dtype=F64)
    got = sh(energy, x).to_dense()
    assert got.shape == (s, s, s, s)
    torch.testing.assert_close(got, torch.func.hessian(energy)(x), rtol=1e-12, atol=1e-300)
    assert sh.passes <= sh.distance2_colors == 5  # grids: star chromatic number 5
    assert x.grad is None


@settings(max_examples=15, deadline=None)
@given(mask=st.builds(
    lambda k, seed: torch.rand(k, k, generator=torch.Generator().manual_seed(seed)) < 0.25,
    st.integers(2, 10), st.integers(0, 2**31 - 1)))
def test_hessian_of_a_random_pairwise_energy_is_exact(mask):
    sym = symmetric(mask)
    pairs = [(a, b) for a, b in itertools.combinations(range(len(sym)), 2) if sym[a, b]]
    w = torch.randn(len(pairs) + 1, generator=torch.Generator().manual_seed(2), dtype=F64)

    def energy(u):
        total = (u**3).sum()
        for k, (a, b) in enumerate(pairs):
            total = total + w[k] * torch.sin(u[a] * u[b] + u[a])
        return total

    x = torch.randn(len(sym), generator=torch.Generator().manual_seed(3), dtype=F64)
    got = gradarg.SparseHessian(sym)(energy, x, layout=torch.strided)
    torch.testing.assert_close(got, torch.func.hessian(energy)(x), rtol=1e-12, atol=1e-300)


def test_hessian_bad_input():
    with pytest.raises(ValueError, match="must be square"):
        gradarg.SparseHessian(torch.ones(3, 4, dtype=torch.bool))
    sh = gradarg.SparseHessian(torch.eye(3, dtype=torch.bool))
    with pytest.raises(ValueError, match="scalar"):
        sh(lambda u: u * 2, torch.zeros(3, dtype=F64))
    with pytest.raises(ValueError, match="expects"):
        sh(lambda u: u.sum(), torch.zeros(4, dtype=F64))
    with pytest.raises(TypeError, match="real floating"):
        sh(lambda u: u.sum(), torch.zeros(3, dtype=torch.int64))


# --------------------------------------------------------------------------- bidirectional


def arrowhead(n: int) -> torch.Tensor:
    p = torch.eye(n, dtype=torch.bool)
    p[0] = p[:, 0] = True
    return p


def arrow_fn(u: torch.Tensor) -> torch.Tensor:
    return torch.cat([(u**2).sum(0, keepdim=True) + u[0], u[1:] * u[0] + torch.sin(u[1:])])


def test_arrowhead_in_three_passes_exact():
    n = 300
    sj = gradarg.SparseJacobian(arrowhead(n))
    assert (sj.mode, sj.passes) == ("bidirectional", 3)
    x = torch.randn(n, generator=torch.Generator().manual_seed(0), dtype=F64)
    got = sj(arrow_fn, x, certify=2).to_dense()
    torch.testing.assert_close(got, torch.func.jacrev(arrow_fn)(x), rtol=1e-12, atol=1e-300)


@settings(max_examples=15, deadline=None)
@given(mask=masks(max_side=12), dense_row=st.booleans(), dense_col=st.booleans())
def test_bidirectional_split_is_exact_on_random_patterns(mask, dense_row, dense_col):
    mask = mask.clone()
    if dense_row:
        mask[0] = True
    if dense_col:
        mask[:, -1] = True
    a = torch.randn(mask.shape, generator=torch.Generator().manual_seed(4), dtype=F64) * mask

    def f(u):
        return a @ torch.tanh(u) + (a @ u) ** 2

    sj = gradarg.SparseJacobian(mask, method="bidirectional")
    co = coordinates(mask)
    part = bidirectional_partition(co)
    assert sj.passes == part.passes
    x = torch.randn(mask.shape[1], generator=torch.Generator().manual_seed(5), dtype=F64)
    got = sj(f, x, layout=torch.strided)
    torch.testing.assert_close(got, torch.func.jacrev(f)(x), rtol=1e-12, atol=1e-300)
    auto = gradarg.SparseJacobian(mask)
    assert auto.passes <= min(k for k in (auto.row_colors, auto.column_colors, 10**9) if k)


# --------------------------------------------------------------------------- acyclic


def two_coloured_cycle(sym: np.ndarray, colors: np.ndarray) -> bool:
    """Brute force: does any two colour classes' induced subgraph contain a cycle?"""
    off = sym & ~np.eye(len(sym), dtype=bool)
    for a, b in itertools.combinations(np.unique(colors).tolist(), 2):
        keep = np.flatnonzero((colors == a) | (colors == b))
        sub = nx.from_numpy_array(off[np.ix_(keep, keep)].astype(int))
        if sub.number_of_edges() >= sub.number_of_nodes() - nx.number_connected_components(sub) + 1:
            return True
    return False


@settings(max_examples=30, deadline=None)
@given(mask=st.builds(
    lambda k, p, seed: torch.rand(k, k, generator=torch.Generator().manual_seed(seed)) < p,
    st.integers(2, 12), st.floats(0.05, 0.5), st.integers(0, 2**31 - 1)))
def test_acyclic_colouring_has_no_two_coloured_cycle(mask):
    from gradarg.sparse.acyclic import acyclic_coloring

    sym = symmetric(mask).numpy()
    indptr, indices = adjacency(sym)
    colors = acyclic_coloring(indptr, indices, np.random.default_rng(1).permutation(len(sym)))
    off = sym & ~np.eye(len(sym), dtype=bool)
    assert all(colors[a] != colors[b] for a, b in zip(*np.nonzero(off), strict=True))
    assert not two_coloured_cycle(sym, colors)


def test_acyclic_banded_hessian_in_six_products_exact():
    n, half = 40, 5
    sh = gradarg.SparseHessian(banded(n, half), method="acyclic")
    assert sh.passes == half + 1 < gradarg.SparseHessian(banded(n, half)).passes
    x = torch.randn(n, generator=torch.Generator().manual_seed(6), dtype=F64)
    f = band_energy(half)
    torch.testing.assert_close(sh(f, x).to_dense(), torch.func.hessian(f)(x),
                               rtol=1e-12, atol=1e-300)


@settings(max_examples=10, deadline=None)
@given(mask=st.builds(
    lambda k, seed: torch.rand(k, k, generator=torch.Generator().manual_seed(seed)) < 0.3,
    st.integers(2, 10), st.integers(0, 2**31 - 1)))
def test_acyclic_hessian_of_a_random_pairwise_energy_is_exact(mask):
    sym = symmetric(mask)
    pairs = [(a, b) for a, b in itertools.combinations(range(len(sym)), 2) if sym[a, b]]
    w = torch.randn(len(pairs) + 1, generator=torch.Generator().manual_seed(7), dtype=F64)

    def energy(u):
        total = torch.cos(u).sum()
        for k, (a, b) in enumerate(pairs):
            total = total + w[k] * (u[a] - u[b]) ** 4 + torch.sin(u[a] * u[b])
        return total

    x = torch.randn(len(sym), generator=torch.Generator().manual_seed(8), dtype=F64)
    got = gradarg.SparseHessian(sym, method="acyclic")(energy, x, layout=torch.strided)
    torch.testing.assert_close(got, torch.func.hessian(energy)(x), rtol=1e-12, atol=1e-300)
    with pytest.raises(ValueError, match="method must be"):
        gradarg.SparseHessian(sym, method="distance2")
