"""Every colouring path, forced (``gradarg.sparse._numba.colouring_path``), whatever ran
before in the process: each colouring checked against the brute-force definition (no two
columns of one colour share a row, and rows alike), the path recorded as taken, and the colour
counts against today's reference colouring (numba's, bit for bit the interpreted one).

A mutation of any path fails here in any test order: the path is forced, not left to the rule
(which takes numba once it is loaded)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest
import torch

import gradarg
from gradarg.sparse import _numba, d2color, lowerbound
from gradarg.sparse.coloring import color_pattern
from gradarg.sparse.pattern import coordinates

ROOT = Path(__file__).resolve().parents[2]
PATHS = _numba.PATHS


def random_masks(count: int, seed: int, side: int = 40) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(count):
        m, n = (int(v) for v in rng.integers(1, side + 1, 2))
        mask = rng.random((m, n)) < rng.choice([0.03, 0.1, 0.3, 0.7])
        mask[rng.integers(m), rng.integers(n)] = True
        out.append(mask)
    return out


def conflict(mask: np.ndarray, side: str, colors: np.ndarray):
    """Brute force, from the definition: a line holding two entries whose rows (``side="rows"``:
    two rows of one colour sharing a column) or columns (two columns of one colour sharing a
    row) have the same colour; ``(line, colour)`` of the first, or ``None``."""
    rows, cols = np.nonzero(mask)
    line, member = (cols, rows) if side == "rows" else (rows, cols)
    k = int(colors.max()) + 1
    key, counts = np.unique(line.astype(np.int64) * k + colors[member], return_counts=True)
    bad = key[counts > 1]
    return (int(bad[0] // k), int(bad[0] % k)) if bad.size else None


def coloured(path: str, call):
    with _numba.colouring_path(path):
        got = call()
        assert _numba.last_path() == path  # the forced path is the one that ran
    return got


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("strategy", ("best", "largest_first", "DSATUR"))
def test_every_path_colours_validly(path, strategy):
    for mask in random_masks(40, 1):
        for side in ("rows", "columns"):
            colors = coloured(path, lambda m=mask, s=side: color_pattern(
                torch.from_numpy(m), s, strategy=strategy).numpy())
            assert colors.shape == (mask.shape[0] if side == "rows" else mask.shape[1],)
            assert colors.min() == 0
            assert conflict(mask, side, colors) is None, (path, strategy, side)


@pytest.mark.parametrize("path", ("rustworkx", "python"))
def test_largest_first_is_the_compiled_one_on_every_path(path):
    # rustworkx's Degree strategy: largest first, ties by index, as numba's kernel
    for mask in random_masks(60, 2):
        co = coordinates(torch.from_numpy(mask))
        for side in ("rows", "columns"):
            arrays = d2color.bipartite(co, side)
            want = coloured("numba", lambda a=arrays: d2color.color_bipartite(
                *a, "largest_first")[0])
            got = coloured(path, lambda a=arrays: d2color.color_bipartite(
                *a, "largest_first")[0])
            assert np.array_equal(got, want)


def test_forcing_a_path_is_undone_and_checked():
    with _numba.colouring_path("python"):
        assert _numba.forced_path() == "python"
        with _numba.colouring_path("rustworkx"):
            assert _numba.forced_path() == "rustworkx"
        assert _numba.forced_path() == "python"
    assert _numba.forced_path() is None
    with pytest.raises(ValueError, match="path must be one of"), _numba.colouring_path("numpy"):
        pass


def _problems():
    spec = importlib.util.spec_from_file_location(
        "bench_problems", ROOT / "benchmarks" / "problems.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("i", range(7))
def test_the_seven_benchmark_functions_never_take_more_colours(i):
    """Each path's distance-2 colouring of both sides of each benchmark pattern: valid (brute
    force) and never more colours than numba's ``best`` (today's colouring)."""
    name, kind, f, x = _problems().problem(i)
    detect = gradarg.hessian_sparsity if kind == "hessian" else gradarg.jacobian_sparsity
    co = coordinates(detect(f, x), x.shape)
    mask = np.zeros((co.m, co.n), dtype=bool)
    mask[co.rows, co.cols] = True
    # dense lines are peeled before any colouring (gradarg.sparse.peel): colour the rest
    mask = mask[mask.sum(1) <= 64][:, mask.sum(0) <= 64]
    co = coordinates(torch.from_numpy(mask))
    co_sides = ("rows", "columns")
    for side in co_sides:
        arrays = d2color.bipartite(co, side)
        today = coloured("numba", lambda a=arrays: d2color.color_bipartite(*a)[0])
        for path in ("rustworkx", "python"):
            got = coloured(path, lambda a=arrays: d2color.color_bipartite(*a)[0])
            assert conflict(mask, side, got) is None, (name, path, side)
            assert got.max() <= today.max(), (name, path, side)


def test_random_patterns_colour_counts_against_today():
    """On random patterns rustworkx's DSATUR breaks ties otherwise than ours: measured here,
    the rustworkx path never needs more than one colour more than today's on a pattern, and
    no more colours in total (it finds fewer about as often)."""
    total_rx = total_today = 0
    for mask in random_masks(120, 3, side=60):
        co = coordinates(torch.from_numpy(mask))
        for side in ("rows", "columns"):
            arrays = d2color.bipartite(co, side)
            today = int(coloured("numba", lambda a=arrays: d2color.color_bipartite(*a)[0]).max())
            got = coloured("rustworkx", lambda a=arrays: d2color.color_bipartite(*a)[0])
            assert conflict(mask, side, got) is None
            assert int(got.max()) <= today + 1
            total_rx += int(got.max()) + 1
            total_today += today + 1
    assert total_rx <= total_today


def test_constructors_take_the_forced_path():
    i = torch.arange(200)
    tridiagonal = (i[:, None] - i).abs() <= 1
    for path in PATHS:
        sj = coloured(path, lambda: gradarg.SparseJacobian(tridiagonal))
        assert sj.passes == 3


def banded_masks(count: int, seed: int) -> list[np.ndarray]:
    """Square masks with ``lo`` bands below the diagonal and ``hi`` above, some with holes,
    some with a few random entries more: the shapes where ``v mod k`` may be proper."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(count):
        n = int(rng.integers(2, 50))
        lo, hi = (int(v) for v in rng.integers(0, 4, 2))
        i = np.arange(n)
        offset = i[None, :] - i[:, None]
        mask = (offset >= -lo) & (offset <= hi)
        mask &= rng.random((n, n)) < rng.choice([1.0, 0.8])
        if rng.random() < 0.3:
            mask[rng.integers(n, size=2), rng.integers(n, size=2)] = True
        mask[rng.integers(n), rng.integers(n)] = True
        out.append(mask)
    return out


def test_modular_colouring_is_proper_and_meets_the_bound_or_is_refused():
    """``d2color.modular`` gives ``v mod k`` (``k``: most entries of one line on the other side,
    a lower bound) exactly when that colouring is proper (brute force), else ``None``."""
    hits = refusals = 0
    for mask in banded_masks(150, 4) + random_masks(60, 5):
        co = coordinates(torch.from_numpy(mask))
        for side in ("rows", "columns"):
            arrays = d2color.bipartite(co, side)
            nv = len(arrays[0]) - 1
            k = int(mask.sum(axis=0 if side == "rows" else 1).max())  # the densest line
            candidate = np.arange(nv) % k
            proper = conflict(mask, side, candidate) is None
            got = d2color.modular(arrays[2], arrays[3], nv)
            assert (got is not None) == proper, (mask.shape, side)
            if got is None:
                refusals += 1
                continue
            hits += 1
            assert np.array_equal(got, candidate)
            today = coloured("numba", lambda a=arrays: d2color.color_bipartite(*a)[0])
            assert int(got.max()) <= int(today.max())  # the bound: never more than a search
    assert hits > 50 and refusals > 50  # both outcomes exercised


@pytest.mark.parametrize("numba_first", (True, False))
def test_best_unforced_is_modular_when_it_meets_the_bound_whatever_ran_before(numba_first):
    i = torch.arange(200)
    tridiagonal = (i[:, None] - i).abs() <= 1
    # a 7-point stencil on 9³: each row holds a point and its 6 neighbours, so 7 colours are
    # needed, and the index offsets 0, ±1, ±9, ±81 are distinct modulo 7 (0, ±1, ±2, ±4)
    s = 9
    g = torch.arange(s)
    a, b, c = torch.meshgrid(g, g, g, indexing="ij")
    d = ((a.reshape(-1, 1) - a.reshape(1, -1)).abs() + (b.reshape(-1, 1) - b.reshape(1, -1)).abs()
         + (c.reshape(-1, 1) - c.reshape(1, -1)).abs())
    stencil = d <= 1
    if numba_first:
        coloured("numba", lambda: color_pattern(stencil, "columns"))
    for mask, want in ((tridiagonal, 3), (stencil, 7)):
        sj = gradarg.SparseJacobian(mask)
        assert _numba.last_path() == "modular"
        assert sj.passes == want
        for side in ("rows", "columns"):
            colors = color_pattern(mask, side).numpy()
            assert _numba.last_path() == "modular"
            assert conflict(mask.numpy(), side, colors) is None
            assert int(colors.max()) + 1 == want
            searched = coloured("python", lambda m=mask, s=side: color_pattern(m, s).numpy())
            assert int(searched.max()) + 1 >= want  # what the search finds: never fewer


def test_best_unforced_never_takes_more_colours_than_today():
    """The rule's ``best`` (with the modular colouring first) against today's colouring
    (numba's ``best``, the search alone): proper, never more colours."""
    for mask in banded_masks(80, 6) + random_masks(40, 7):
        co = coordinates(torch.from_numpy(mask))
        for side in ("rows", "columns"):
            arrays = d2color.bipartite(co, side)
            today = coloured("numba", lambda a=arrays: d2color.color_bipartite(*a)[0])
            got = d2color.color_bipartite(*arrays)[0]
            assert conflict(mask, side, got) is None
            assert int(got.max()) <= int(today.max())


@pytest.mark.parametrize("clash", (False, True))
def test_modular_check_by_sorting_when_counters_would_be_many(clash):
    # one line of 100 vertices and 1000 lines of one: 1001 × 100 (line, residue) counters are
    # more than the entries justify, so the check sorts instead of counting
    nv = 1000
    lines = [list(range(100))] + [[v] for v in range(nv)]
    if clash:
        lines[1] = [0, 100]  # 0 ≡ 100 (mod 100)
    pb = np.cumsum([0] + [len(w) for w in lines])
    ib = np.array([v for w in lines for v in w], dtype=np.int64)
    assert (len(lines) * 100 > 4 * ib.size + 65536)
    got = d2color.modular(pb, ib, nv)
    assert (got is None) if clash else np.array_equal(got, np.arange(nv) % 100)


def grid_stencils(count: int, seed: int) -> list[tuple[np.ndarray, tuple[int, ...]]]:
    """``(mask, shape)``: square patterns over a small grid (2-D or 3-D, periodic or not), each
    row the point's random stencil (a few offsets in ``[-2, 2]^D``, always the point itself),
    some with random entries more."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(count):
        dims = int(rng.integers(2, 4))
        shape = tuple(int(v) for v in rng.integers(2, 9 if dims == 2 else 5, dims))
        n = int(np.prod(shape))
        offsets = {(0,) * dims} | {tuple(int(v) for v in rng.integers(-2, 3, dims))
                                   for _ in range(int(rng.integers(1, 6)))}
        periodic = bool(rng.random() < 0.5)
        here = np.array(np.unravel_index(np.arange(n), shape)).T
        mask = np.zeros((n, n), dtype=bool)
        for off in offsets:
            there = here + np.array(off)
            if periodic:
                there %= np.array(shape)
            ok = ((there >= 0) & (there < np.array(shape))).all(axis=1)
            mask[np.flatnonzero(ok), np.ravel_multi_index(there[ok].T, shape)] = True
        if rng.random() < 0.2:
            mask[rng.integers(n, size=2), rng.integers(n, size=2)] = True
        out.append((mask, shape))
    return out


def first_proper_lattice(mask: np.ndarray, side: str, shape: tuple[int, ...]):
    """Brute force: the first ``a`` in ``[0, k)^D`` (lexicographic) whose colouring
    ``a · index mod k`` is proper, as colours, or ``None``."""
    k = int(mask.sum(axis=0 if side == "rows" else 1).max())
    index = np.array(np.unravel_index(np.arange(int(np.prod(shape))), shape))
    for a in np.ndindex(*(k,) * len(shape)):
        colors = (np.array(a) @ index) % k
        if conflict(mask, side, colors) is None:
            return colors
    return None


def test_lattice_colouring_is_the_first_proper_one_or_none():
    hits = misses = full = 0
    for mask, shape in grid_stencils(70, 8):
        co = coordinates(torch.from_numpy(mask))
        for side in ("rows", "columns"):
            arrays = d2color.bipartite(co, side)
            k = int(mask.sum(axis=0 if side == "rows" else 1).max())
            if k <= 1 or k ** len(shape) > lowerbound.LATTICE_CANDIDATES:
                continue  # one colour: modular's case; too many candidates: not tried
            got = d2color.lattice(arrays[2], arrays[3], shape)
            want = first_proper_lattice(mask, side, shape)
            if got is None:
                # refused: no lattice colouring, or lines too unequal for the padded layout
                lengths = np.diff(arrays[2])
                assert want is None or lengths.size * k * k > 2 * int(lengths @ lengths) + 65536
                misses += 1
                continue
            hits += 1
            full += arrays[3].size == k * (len(arrays[2]) - 1)  # every line full: no padding
            assert want is not None and np.array_equal(got, want), (shape, side)
            today = coloured("numba", lambda a=arrays: d2color.color_bipartite(*a)[0])
            assert int(got.max()) <= int(today.max())
    assert hits > 40 and misses > 10 and 5 <= full <= hits - 5, (hits, misses, full)


def gray_scott(z: torch.Tensor) -> torch.Tensor:
    u, v = z[0], z[1]

    def lap(a):
        return sum(torch.roll(a, s, d) for s in (1, -1) for d in (0, 1)) - 4 * a

    uvv = u * v * v
    return torch.stack([0.16 * lap(u) - uvv + 0.035 * (1 - u), 0.08 * lap(v) + uvv - 0.1 * v])


@pytest.mark.parametrize("numba_first", (True, False))
def test_gray_scott_in_six_passes_exact_whatever_ran_before(numba_first):
    """Two species on a periodic 12 × 12 grid: 6 entries a row, so 6 colours at least;
    largest-first and DSATUR find more, the lattice colouring (3, 1, 2) finds 6."""
    x = torch.rand(2, 12, 12, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    pattern = gradarg.jacobian_sparsity(gray_scott, x)
    if numba_first:
        coloured("numba", lambda: color_pattern(pattern, "rows", x_shape=x.shape))
    searched = coloured("python", lambda: gradarg.SparseJacobian(pattern, x.shape))
    sj = gradarg.SparseJacobian(pattern, x.shape)
    assert _numba.last_path() == "lattice"
    assert sj.passes == 6 < searched.passes
    want = torch.func.jacrev(gray_scott)(x)
    torch.testing.assert_close(sj(gray_scott, x).to_dense(), want, rtol=1e-12, atol=1e-12)
