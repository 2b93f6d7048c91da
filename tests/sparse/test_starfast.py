"""The star colouring SparseHessian keeps (gradarg.sparse.starfast): each piece against brute
force, on both colouring paths (forced, whatever ran before in the process).

* ``star_conflict`` accepts exactly the star colourings (proper, no path on four vertices in
  two colours: every path enumerated);
* a greedy order stopped at ``limit`` stops exactly when its whole colouring needs ``limit``
  colours, and otherwise gives the whole colouring;
* ``needs_at_least`` claims a lower bound only where exhaustive enumeration of every
  colouring with one colour fewer finds no star colouring;
* ``colour`` gives a star colouring with never more colours than the search (today's
  colouring: the three greedy orders), and the search's own colouring whenever it takes it;
* the benchmarks' two Hessians take the structured routes, exact against ``torch.func``.
"""

from __future__ import annotations

import importlib.util
import itertools
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import gradarg
from gradarg.sparse import _numba, greedy, starbound, starfast
from gradarg.sparse.star import star_coloring, star_conflict

ROOT = Path(__file__).resolve().parents[2]
PATHS = ("python", "numba")


# --------------------------------------------------------------------------- patterns


def _symmetric(mask: np.ndarray) -> np.ndarray:
    mask = mask | mask.T
    np.fill_diagonal(mask, True)
    return mask


@st.composite
def patterns(draw, max_n: int = 40):
    """``(mask, shape)``: a symmetric pattern with its diagonal, and the input shape (or
    ``None``): random, banded (with holes), a grid stencil, a chain of small blocks, or any of
    these with a dense row and column (an arrowhead)."""
    kind = draw(st.sampled_from(("random", "band", "grid", "blocks")))
    rng = np.random.default_rng(draw(st.integers(0, 2**31 - 1)))
    shape = None
    if kind == "random":
        n = draw(st.integers(1, max_n))
        mask = rng.random((n, n)) < draw(st.sampled_from((0.03, 0.08, 0.2, 0.5)))
    elif kind == "band":
        n = draw(st.integers(2, max_n))
        half = draw(st.integers(1, 4))
        i = np.arange(n)
        mask = (np.abs(i[:, None] - i[None, :]) <= half) & (rng.random((n, n)) < 0.9)
    elif kind == "grid":
        shape = (draw(st.integers(2, 7)), draw(st.integers(2, 7)))
        n = shape[0] * shape[1]
        offsets = [(0, 0)] + [tuple(int(v) for v in rng.integers(-1, 2, 2)) for _ in range(3)]
        here = np.array(np.unravel_index(np.arange(n), shape)).T
        mask = np.zeros((n, n), dtype=bool)
        for off in offsets:
            there = here + np.array(off)
            ok = ((there >= 0) & (there < np.array(shape))).all(axis=1)
            mask[np.flatnonzero(ok), np.ravel_multi_index(there[ok].T, shape)] = True
    else:
        size = draw(st.integers(2, 5))
        count = draw(st.integers(1, max(1, max_n // size)))
        block = rng.random((size, size)) < 0.6
        n = size * count
        mask = np.kron(np.eye(count, dtype=bool), block)
        link = (int(rng.integers(size)), int(rng.integers(size)))
        for b in range(count - 1):
            mask[b * size + link[0], (b + 1) * size + link[1]] = True
    if draw(st.booleans()) and n > 2 and draw(st.integers(0, 3)) == 0:
        hub = int(rng.integers(n))
        mask[hub] = True  # a dense row (and, symmetrised, column)
    return _symmetric(mask), shape


def graph_of(mask: np.ndarray):
    """``(rows, cols, indptr, indices)`` of a symmetric pattern with its diagonal, computed
    here (not by gradarg.sparse.symmetric)."""
    rows, cols = (a.astype(np.int64) for a in np.nonzero(mask))
    off = rows != cols
    n = mask.shape[0]
    indptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows[off], minlength=n), out=indptr[1:])
    return rows, cols, indptr, cols[off]


def is_star(mask: np.ndarray, colors: np.ndarray) -> bool:
    """The definition, by enumeration: no two neighbours alike, and no path ``v–w–x–y`` on four
    distinct vertices with ``c(v) = c(x)`` and ``c(w) = c(y)``."""
    n = mask.shape[0]
    nbr = [[int(w) for w in np.flatnonzero(mask[v]) if w != v] for v in range(n)]
    for v in range(n):
        for w in nbr[v]:
            if colors[v] == colors[w]:
                return False
            for x in nbr[w]:
                if x == v or colors[x] != colors[v]:
                    continue
                for y in nbr[x]:
                    if y not in (v, w) and colors[y] == colors[w]:
                        return False
    return True


def today(indptr: np.ndarray, indices: np.ndarray) -> np.ndarray:
    """The colouring SparseHessian kept before gradarg.sparse.starfast: the three greedy orders
    (gradarg.sparse.greedy.order), the first with fewest colours."""
    best = None
    for name in ("natural", "largest_first", "smallest_last"):
        n = len(indptr) - 1
        seq = np.arange(n) if name == "natural" else greedy.order(indptr, indices, name)
        colors = star_coloring(indptr, indices, seq)
        if best is None or colors.max() < best.max():
            best = colors
    return best


# --------------------------------------------------------------------------- pieces


@settings(max_examples=60, deadline=None)
@given(pattern=patterns(max_n=16), seed=st.integers(0, 2**31 - 1), k=st.integers(1, 6))
def test_star_conflict_accepts_exactly_the_star_colourings(pattern, seed, k):
    mask, _ = pattern
    rows, cols, indptr, indices = graph_of(mask)
    rng = np.random.default_rng(seed)
    n = mask.shape[0]
    valid = star_coloring(indptr, indices, rng.permutation(n))
    for colors in (valid, rng.integers(0, k, n), np.arange(n) % k):
        colors = np.asarray(colors, dtype=np.int64)
        assert (star_conflict(rows, cols, colors) is None) == is_star(mask, colors)


@pytest.mark.parametrize("path", PATHS)
def test_an_order_stops_exactly_when_it_needs_the_limit(path):
    rng = np.random.default_rng(3)
    stopped = finished = 0
    for _ in range(60):
        n = int(rng.integers(2, 30))
        mask = _symmetric(rng.random((n, n)) < rng.choice([0.05, 0.15, 0.4]))
        _, _, indptr, indices = graph_of(mask)
        seq = rng.permutation(n)
        with _numba.colouring_path(path):
            whole = star_coloring(indptr, indices, seq)
            k = int(whole.max()) + 1
            for limit in range(1, k + 2):
                got = star_coloring(indptr, indices, seq, limit)
                if limit <= k:
                    assert got is None, (n, limit, k)
                    stopped += 1
                else:
                    assert got is not None and np.array_equal(got, whole)
                    finished += 1
    assert stopped > 100 and finished == 60


def star_colourable(mask: np.ndarray, k: int) -> bool:
    """Exhaustive: whether some colouring with ``k`` colours is a star colouring (every one of
    the ``k ** n`` colourings checked at once against every edge and path on four vertices)."""
    n = mask.shape[0]
    if k <= 0:
        return n == 0
    nbr = [[int(w) for w in np.flatnonzero(mask[v]) if w != v] for v in range(n)]
    edges = [(v, w) for v in range(n) for w in nbr[v] if v < w]
    paths = [(v, w, x, y) for v in range(n) for w in nbr[v] for x in nbr[w] if x != v
             for y in nbr[x] if y not in (v, w)]
    grid = np.array(list(itertools.product(range(k), repeat=n)), dtype=np.int8).reshape(-1, n)
    ok = np.ones(len(grid), dtype=bool)
    for v, w in edges:
        ok &= grid[:, v] != grid[:, w]
    for v, w, x, y in paths:
        ok &= ~((grid[:, v] == grid[:, x]) & (grid[:, w] == grid[:, y]))
    return bool(ok.any())


def test_a_claimed_lower_bound_holds_by_enumeration():
    rng = np.random.default_rng(5)
    claims = 0
    for _ in range(150):
        n = int(rng.integers(1, 9))
        mask = _symmetric(rng.random((n, n)) < rng.choice([0.2, 0.4, 0.7]))
        _, _, indptr, indices = graph_of(mask)
        for k in range(1, 6):
            if starbound.needs_at_least(indptr, indices, k):
                assert k - 1 > 4 or not star_colourable(mask, k - 1), (mask.astype(int), k)
                claims += 1
    assert claims > 300


def chain_of_four_cycles(blocks: int) -> np.ndarray:
    """The Rosenbrock plus Powell Hessian's graph: 4-cycles ``a–b–c–d–a`` chained ``d–a``."""
    n = 4 * blocks
    mask = np.zeros((n, n), dtype=bool)
    for b in range(blocks):
        a = 4 * b
        for v, w in ((a, a + 1), (a + 1, a + 2), (a + 2, a + 3), (a, a + 3)):
            mask[v, w] = True
        if b + 1 < blocks:
            mask[a + 3, a + 4] = True
    return _symmetric(mask)


def test_the_lower_bound_of_known_graphs():
    # a chain of three 4-cycles (12 vertices): no star colouring with 3 colours (enumerated
    # here on its first 10 vertices, which the ball search finds), one with 4
    small = chain_of_four_cycles(3)[:10, :10]
    assert not star_colourable(small, 3)
    _, _, indptr, indices = graph_of(chain_of_four_cycles(50))
    assert starbound.needs_at_least(indptr, indices, 4)
    assert not starbound.needs_at_least(indptr, indices, 5)
    cycle5 = _symmetric(np.roll(np.eye(5, dtype=bool), 1, axis=1))  # C5: 4 colours
    _, _, indptr, indices = graph_of(cycle5)
    assert starbound.needs_at_least(indptr, indices, 4) and not star_colourable(cycle5, 3)
    assert not starbound.needs_at_least(indptr, indices, 5)


def test_periodic_continues_the_natural_order_or_refuses():
    """On chains of blocks the window's colouring repeats and is continued; on a random
    pattern there is no period; the continuation starts with the natural order's colouring."""
    rng = np.random.default_rng(7)
    found = refused = 0
    for trial in range(40):
        if trial % 2:
            mask = _symmetric(rng.random((120, 120)) < 0.05)
        else:
            mask = chain_of_four_cycles(30)
            if trial % 4 == 2:
                mask = mask.copy()
                mask[5, 60] = mask[60, 5] = True  # one long link: still a period in the window
        _, _, indptr, indices = graph_of(mask)
        got = starfast.periodic(indptr, indices, window=32)
        natural = star_coloring(indptr, indices, np.arange(mask.shape[0]))
        if got is None:
            refused += 1
            continue
        found += 1
        # the window's colours are the natural order's
        assert np.array_equal(got[:32], natural[:32])
        period = next(p for p in range(1, 9) if np.array_equal(got[16:32], got[16 - p:32 - p]))
        assert np.array_equal(got[16:], got[16 - period:-period])  # continued with it
    assert found >= 15 and refused >= 15


# --------------------------------------------------------------------------- the choice


@pytest.mark.parametrize("path", PATHS)
def test_search_is_todays_colouring(path):
    rng = np.random.default_rng(11)
    for _ in range(40):
        n = int(rng.integers(1, 50))
        mask = _symmetric(rng.random((n, n)) < rng.choice([0.03, 0.1, 0.3]))
        _, _, indptr, indices = graph_of(mask)
        with _numba.colouring_path(path):
            assert np.array_equal(starfast.search(indptr, indices), today(indptr, indices))


def check_choice(mask: np.ndarray, shape, path: str) -> str:
    rows, cols, indptr, indices = graph_of(mask)
    with _numba.colouring_path(path):
        colors, route = starfast.colour(rows, cols, indptr, indices, shape)
        reference = today(indptr, indices)
    assert is_star(mask, colors), route
    assert colors.max() <= reference.max(), route  # never more colours than the search
    if route == "search":
        assert np.array_equal(colors, reference)
    else:
        assert route.split("+")[0] in ("modular", "lattice", "tile", "periodic")
        assert route.split("+")[1] in ("bound", "orders")
    return route


@pytest.mark.parametrize("path", PATHS)
@settings(max_examples=40, deadline=None)
@given(pattern=patterns())
def test_the_choice_is_a_star_colouring_never_more_colours_than_the_search(path, pattern):
    check_choice(*pattern, path)


@pytest.mark.parametrize("path", PATHS)
def test_every_route_is_taken_and_checked(path):
    """Chains of blocks past the window (periodic), bands (modular), grids (lattice, and a
    tile for the triangulated grid), random patterns (the search), on the forced path."""
    routes = set()
    rng = np.random.default_rng(13)
    i = np.arange(300)
    cases = [(chain_of_four_cycles(80), None),
             (np.abs(i[:, None] - i[None, :]) <= 2, None),
             (_symmetric(rng.random((60, 60)) < 0.1), None)]
    s = 13  # (at 12 the offsets ±1, ±11, ±12 differ modulo 7: modular)
    g = np.array(np.unravel_index(np.arange(s * s), (s, s))).T
    d = g[:, None, :] - g[None, :, :]
    tri = ((np.abs(d).sum(-1) <= 1) | ((d[..., 0] == -d[..., 1]) & (np.abs(d[..., 0]) == 1)))
    cases.append((tri, (s, s)))  # the minimal-surface stencil: a tile, 6 against 9
    box = np.abs(d).max(-1) <= 1
    cases.append((box, (s, s)))  # the 9-point stencil: lattice, 9
    for mask, shape in cases:
        routes.add(check_choice(mask, shape, path))
    # past the window, one edge joins two vertices the periodic continuation colours alike:
    # the continuation is refused (not a star colouring), whatever else is kept
    broken = chain_of_four_cycles(80)
    broken[300, 308] = broken[308, 300] = True
    assert not check_choice(broken, None, path).startswith("periodic")
    assert {r.split("+")[0] for r in routes} == {"periodic", "modular", "lattice", "tile",
                                                 "search"}
    assert {r.split("+")[-1] for r in routes} >= {"bound", "orders"}


def test_a_lattice_from_a_sample_of_rows_is_checked_on_every_row():
    """A 5-point stencil on 20 × 20 where two interior rows outside the sample each swap a
    neighbour for the other, five columns away: the sample's colouring puts those two alike;
    the check on the whole pattern refuses it and every row is used instead."""
    s = 20
    g = np.array(np.unravel_index(np.arange(s * s), (s, s))).T
    mask = np.abs(g[:, None, :] - g[None, :, :]).sum(-1) <= 1
    picked = set(np.linspace(0, s * s - 1, starfast.SAMPLE).astype(int).tolist())
    u = next(v for v in range(2 * s, s * s - 2 * s) if 1 <= v % s < s - 6
             and not {v, v + 5} & picked)
    mask[u, u + 1] = mask[u + 1, u] = False
    mask[u + 5, u + 6] = mask[u + 6, u + 5] = False
    mask[u, u + 5] = mask[u + 5, u] = True  # rows u and u + 5 keep 5 entries
    rows, cols, indptr, _ = graph_of(mask)
    ptr = indptr + np.arange(s * s + 1)
    sampled = starfast.sampled_lattice(ptr, cols, (s, s))
    assert sampled is not None and sampled[u] == sampled[u + 5]  # adjacent, alike
    assert star_conflict(rows, cols, sampled) is not None
    for path in PATHS:
        route = check_choice(mask, (s, s), path)
        assert not route.startswith("lattice") or route.split("+")[1] in ("bound", "orders")


# --------------------------------------------------------------------------- the benchmarks


def _problems():
    spec = importlib.util.spec_from_file_location(
        "bench_problems", ROOT / "benchmarks" / "problems.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("numba_first", (False, True))
def test_the_benchmark_hessians_take_the_structured_routes_exactly(numba_first):
    """Smaller instances of the benchmarks' two Hessians (Rosenbrock plus Powell, n = 400;
    minimal surface, 13 × 13: modular would do at 12): structured colourings, fewer or as many products as the
    search, Hessians equal to torch.func.hessian's; the same after numba's kernels ran."""
    bench = _problems()
    cases = [(bench.rosenbrock_powell(torch), 400, "periodic+bound", 4),
             (bench.minimal_surface(torch, s=13), (13, 13), "tile+bound", 6)]
    if numba_first:
        with _numba.colouring_path("numba"):
            gradarg.SparseHessian(torch.eye(300, dtype=torch.bool) | torch.eye(300).roll(1, 1)
                                  .bool())
    for f, shape, route, passes in cases:
        x = torch.rand(shape, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
        pattern = gradarg.hessian_sparsity(f, x)
        sh = gradarg.SparseHessian(pattern, x.shape)
        assert (sh.route, sh.passes) == (route, passes)
        _, _, indptr, indices = graph_of(pattern.to_dense().reshape(x.numel(), -1).numpy())
        assert passes <= int(today(indptr, indices).max()) + 1
        torch.testing.assert_close(sh(f, x).to_dense(), torch.func.hessian(f)(x),
                                   rtol=1e-12, atol=1e-12)


def test_a_fresh_process_colours_the_benchmark_hessians_without_numba():
    script = """
import json, sys
sys.path.insert(0, sys.argv[1])
import torch, gradarg
from problems import problem
out = {}
for i in (2, 4):
    name, kind, f, x = problem(i)
    sh = gradarg.SparseHessian(gradarg.hessian_sparsity(f, x), x.shape)
    out[name] = [sh.route, sh.passes]
out["numba"] = "numba" in sys.modules
print(json.dumps(out))
"""
    done = subprocess.run([sys.executable, "-c", script, str(ROOT / "benchmarks")],
                          capture_output=True, text=True, check=True)
    got = json.loads(done.stdout.strip().splitlines()[-1])
    assert got == {"Rosenbrock+Powell n=5000 (H)": ["periodic+bound", 4],
                   "minimal surface 64x64 (H)": ["tile+bound", 6], "numba": False}
