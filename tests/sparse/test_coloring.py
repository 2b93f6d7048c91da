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


# ------------------------------------------------- acyclic: substitution by prefix sums


def pair_energy(n: int, a: np.ndarray, b: np.ndarray):
    """``cos`` of every ``u_v`` and, per pair ``{a, b}``, ``w (u_a − u_b)⁴ + sin(u_a u_b)``:
    a Hessian whose pattern is the pairs and the diagonal, every entry generically non-zero."""
    a_t, b_t = torch.as_tensor(a), torch.as_tensor(b)
    w = torch.randn(len(a), generator=torch.Generator().manual_seed(n), dtype=F64)

    def energy(u):
        ua, ub = u[a_t], u[b_t]
        return torch.cos(u).sum() + (w.to(u.dtype) * (ua - ub) ** 4 + torch.sin(ua * ub)).sum()

    pattern = torch.eye(n, dtype=torch.bool)
    pattern[a_t, b_t] = pattern[b_t, a_t] = True
    return pattern, energy


def band_pairs(n: int, half: int):
    return (np.concatenate([np.arange(n - k) for k in range(1, half + 1)]),
            np.concatenate([np.arange(k, n) for k in range(1, half + 1)]))


def grid_pairs(side: int):  # the 5-point stencil on a side × side grid
    v = np.arange(side * side).reshape(side, side)
    return (np.r_[v[:, :-1].ravel(), v[:-1, :].ravel()], np.r_[v[:, 1:].ravel(), v[1:, :].ravel()])


def random_pairs(n: int, density: float, seed: int):
    return np.nonzero(np.triu(np.random.default_rng(seed).random((n, n)) < density, 1))


PAIR_PROBLEMS = {
    "band n=2000 half-width 1": (2000, band_pairs(2000, 1)),
    "band n=2000 half-width 3": (2000, band_pairs(2000, 3)),
    "grid 40x40 5-point": (1600, grid_pairs(40)),
    "arrowhead n=2000": (2000, (np.zeros(1999, dtype=np.int64), np.arange(1, 2000))),
    "random n=300 seed 0": (300, random_pairs(300, 0.01, 0)),
    "random n=300 seed 1": (300, random_pairs(300, 0.02, 1)),
}


@pytest.mark.parametrize("name", list(PAIR_PROBLEMS))
def test_acyclic_hessian_against_torch_func_hessian_float64_and_float32(name):
    n, (a, b) = PAIR_PROBLEMS[name]
    pattern, energy = pair_energy(n, a, b)
    x = torch.randn(n, generator=torch.Generator().manual_seed(2), dtype=F64)
    acyclic = gradarg.SparseHessian(pattern, method="acyclic")
    star = gradarg.SparseHessian(pattern)
    assert acyclic.passes <= star.passes
    want = torch.func.hessian(energy)(x)
    scale = want.abs().max()
    got = acyclic(energy, x, layout=torch.strided)
    assert got.dtype == F64
    assert (got - want).abs().max() <= 1e-13 * scale  # star: ~1e-17, acyclic: ~1e-16
    # float32: the products' rounding adds up over subtrees (at most half a tree each), but the
    # prefix sum is float64: within a small factor of star's error
    x32 = x.float()
    want = torch.func.hessian(energy)(x32.double())
    got32 = acyclic(energy, x32, layout=torch.strided)
    assert got32.dtype == torch.float32
    err_acyclic = (got32.double() - want).abs().max()
    err_star = (star(energy, x32, layout=torch.strided).double() - want).abs().max()
    assert err_acyclic <= 4 * max(err_star, 1e-7 * want.abs().max())


def integer_hessian(sym: np.ndarray, seed: int) -> np.ndarray:
    """A symmetric integer matrix with the pattern ``sym`` (every entry in it non-zero): all the
    sums of a substitution are exact in float64."""
    rng = np.random.default_rng(seed)
    h = np.triu(rng.integers(1, 1000, sym.shape) * rng.choice([-1, 1], sym.shape), 1)
    return np.where(sym, h + h.T + np.diag(rng.integers(-999, 1000, len(sym))), 0).astype(float)


def products(h: np.ndarray, colors: np.ndarray) -> np.ndarray:
    """``H s_c`` for every colour ``c``, flattened ``passes × n``."""
    seeds = np.zeros((len(h), colors.max() + 1))
    seeds[np.arange(len(h)), colors] = 1
    return (h @ seeds).T.ravel()


def proper_colouring(sym: np.ndarray, sequence: np.ndarray) -> np.ndarray:
    """Greedy distance-1 colouring (proper, not necessarily acyclic)."""
    colors = np.full(len(sym), -1)
    for v in sequence:
        used = set(colors[np.flatnonzero(sym[v])].tolist())
        colors[v] = min(set(range(len(sym) + 1)) - used)
    return colors


@settings(max_examples=60, deadline=None)
@given(mask=st.builds(
    lambda k, p, seed: torch.rand(k, k, generator=torch.Generator().manual_seed(seed)) < p,
    st.integers(1, 12), st.floats(0.05, 0.6), st.integers(0, 2**31 - 1)),
    seed=st.integers(0, 2**31 - 1))
def test_substitution_plan_is_exact_or_refuses_a_colouring_that_is_not_acyclic(mask, seed):
    from gradarg.sparse.acyclic import substitution_plan

    sym = symmetric(mask).numpy()
    rows, cols = np.nonzero(sym)
    h = integer_hessian(sym, seed)
    colors = proper_colouring(sym & ~np.eye(len(sym), dtype=bool),
                              np.random.default_rng(seed).permutation(len(sym)))
    if two_coloured_cycle(sym, colors):
        with pytest.raises(ValueError, match="not acyclic"):
            substitution_plan(rows, cols, colors)
    else:
        plan = substitution_plan(rows, cols, colors)
        np.testing.assert_array_equal(plan.values(products(h, colors)), h[rows, cols])


def test_substitution_plan_refuses_a_two_coloured_cycle_and_an_improper_colouring():
    from gradarg.sparse.acyclic import substitution_plan

    cycle = np.eye(4, dtype=bool)
    for v in range(4):  # 0 - 1 - 2 - 3 - 0
        cycle[v, (v + 1) % 4] = cycle[(v + 1) % 4, v] = True
    rows, cols = np.nonzero(cycle)
    with pytest.raises(ValueError, match="two-coloured cycle"):
        substitution_plan(rows, cols, np.array([0, 1, 0, 1]))
    with pytest.raises(ValueError, match="share a colour"):
        substitution_plan(rows, cols, np.array([0, 0, 1, 2]))
    plan = substitution_plan(rows, cols, np.array([0, 1, 0, 2]))  # three colours: acyclic
    h = integer_hessian(cycle, 0)
    np.testing.assert_array_equal(plan.values(products(h, np.array([0, 1, 0, 2]))),
                                  h[rows, cols])


def test_acyclic_plan_of_a_path_of_200000_is_built_without_rounds_and_exact():
    # the former plan peeled a path from both ends, one round of array operations per layer
    # (n / 4 rounds, each over what is left: quadratic); now one depth-first search, and a
    # tree 100 000 deep is no recursion
    n = 200_000
    i = torch.arange(n - 1)
    pattern = torch.sparse_coo_tensor(torch.stack([i, i + 1]), torch.ones(n - 1, dtype=torch.bool),
                                      (n, n), check_invariants=True)
    sh = gradarg.SparseHessian(pattern, method="acyclic")
    assert sh.passes == 2
    g = torch.Generator().manual_seed(3)
    w = torch.randint(1, 100, (n - 1,), generator=g).to(F64)
    d = torch.randint(-99, 100, (n,), generator=g).to(F64)

    def energy(u):  # integer coefficients: every product and sum exact
        return 0.5 * (w * (u[1:] - u[:-1]) ** 2).sum() + 0.5 * (d * u * u).sum()

    got = sh(energy, torch.zeros(n, dtype=F64)).coalesce()
    assert got._nnz() == 3 * n - 2
    r, c = got.indices()
    diagonal = d + torch.cat([w, w.new_zeros(1)]) + torch.cat([w.new_zeros(1), w])
    want = torch.where(r == c, diagonal[r], -w[torch.minimum(r, c).clamp_max(n - 2)])
    assert torch.equal(got.values(), want)
    # the slots form one path of n nodes, rooted at its middle: no entry sums more than half
    from gradarg.sparse.acyclic import substitution_plan

    plan = substitution_plan(r.numpy(), c.numpy(), sh.colors.numpy())
    assert np.abs(plan.plus - plan.minus)[(r != c).numpy()].max() <= n // 2


def test_acyclic_substitution_is_the_same_few_torch_operations_however_deep_the_trees():
    from torch.utils._python_dispatch import TorchDispatchMode

    class Count(TorchDispatchMode):
        def __init__(self):
            super().__init__()
            self.ops = 0

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            self.ops += 1
            return func(*args, **(kwargs or {}))

    counts = []
    for n in (10, 3000):  # tree depth ~ n / 2 (path) or ~ n / 6 (band of half-width 3)
        for half in (1, 3):
            sh = gradarg.SparseHessian(banded(n, half).to_sparse(), method="acyclic")
            for dtype in (F64, torch.float32):
                flat = torch.randn(sh.passes * n, dtype=dtype)
                with Count() as count:
                    values = sh._recover(flat)
                assert values.dtype == dtype and values.shape == (sh.nnz,)
                counts.append((dtype, count.ops))
    for dtype in (F64, torch.float32):  # float32: two casts more
        assert len({ops for d, ops in counts if d == dtype}) == 1
    assert max(ops for _, ops in counts) <= 10


@pytest.mark.parametrize("dtype", [torch.float32, F64])
def test_acyclic_substitution_keeps_small_entries_beside_large_sums(dtype):
    # arrowhead: the hub's product sums 2000 entries of size 100 (2e5), and a leaf's entry is
    # the difference of two prefix sums of that size: accumulated in float32, an entry of 1e-3
    # would be lost (eps32 · 2e5 = 0.01); in float64 it comes back to float32's precision.
    # The diagonal (1e8) enters the prefix sum as +B, -B: read back exactly (as +B, +B, the
    # prefix sum would grow to 2e11 and the diagonal lose its last digits in float64)
    n = 2001
    g = torch.Generator().manual_seed(4)
    h = 100 * (1 + torch.rand(n - 1, generator=g, dtype=F64))
    h[::7] = 1e-3 * (1 + torch.rand(len(h[::7]), generator=g, dtype=F64))
    d = 1e8 * (1 + torch.rand(n, generator=g, dtype=F64))
    pattern = torch.eye(n, dtype=torch.bool)
    pattern[0] = pattern[:, 0] = True

    def energy(u):
        return u[0] * (h.to(u.dtype) * u[1:]).sum() + 0.5 * (d.to(u.dtype) * u * u).sum()

    x = torch.zeros(n, dtype=dtype)
    sh = gradarg.SparseHessian(pattern, method="acyclic")
    assert sh.passes == 2
    got = sh(energy, x, layout=torch.strided)
    want = gradarg.SparseHessian(pattern)(energy, x, layout=torch.strided)  # read directly
    torch.testing.assert_close(got[0, 1:], want[0, 1:], rtol=1e-7, atol=0)  # float64: 1.4e-8
    assert torch.equal(got.diagonal(), want.diagonal())


def test_acyclic_substitution_visits_the_largest_child_last():
    # a caterpillar: a spine of 2000 entries below 1 with a leaf of ±1e3 (alternating, so that
    # the signed leaf entries still to come add up) at each spine vertex.  Going down the spine
    # before the leaves would hold them all in the prefix sum (2e6): spine entries off by
    # 2e-9; with the largest child last, no more than a few: 4e-12
    n = 2000
    g = torch.Generator().manual_seed(5)
    spine = torch.rand(n - 1, generator=g, dtype=F64)
    leaf = 1e3 * (1 + torch.rand(n, generator=g, dtype=F64)) * (-1.0) ** torch.arange(n)
    d = torch.rand(2 * n, generator=g, dtype=F64)
    k = torch.arange(n)
    want = torch.diag(d)
    want[k[:-1], k[1:]] = want[k[1:], k[:-1]] = spine
    want[k, n + k] = want[n + k, k] = leaf

    def energy(u):
        return ((spine * u[:n - 1] * u[1:n]).sum() + (leaf * u[:n] * u[n:]).sum()
                + 0.5 * (d * u * u).sum())

    sh = gradarg.SparseHessian(want != 0, method="acyclic")
    assert sh.passes == 2
    got = sh(energy, torch.zeros(2 * n, dtype=F64), layout=torch.strided)
    assert (got - want).abs().max() <= 1e-10
