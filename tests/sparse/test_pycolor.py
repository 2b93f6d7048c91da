"""The numba-free colourings (gradarg.sparse._pycolor) against the compiled kernels: the same
colourings, bit for bit, on hundreds of random patterns and on the seven benchmark functions;
and the rule that picks one (gradarg.sparse._numba.use_numba), seen from fresh processes."""

from __future__ import annotations

import gc
import importlib.util
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
from gradarg.sparse import _numba, _pycolor, d2color, greedy, star, symmetric
from gradarg.sparse.bidirectional import bidirectional_partition
from gradarg.sparse.coloring import color_pattern
from gradarg.sparse.pattern import coordinates
from gradarg.sparse.symmetric import symmetric_union

ROOT = Path(__file__).resolve().parents[2]


def random_mask(rng: np.random.Generator, square: bool = False) -> np.ndarray:
    """A random pattern up to 48 × 48, sometimes with dense or empty rows and columns."""
    m = int(rng.integers(1, 49))
    n = m if square else int(rng.integers(1, 49))
    mask = rng.random((m, n)) < rng.choice([0.02, 0.06, 0.15, 0.4, 0.8])
    for _ in range(int(rng.integers(0, 3))):
        mask[rng.integers(m)] = True  # dense rows
    for _ in range(int(rng.integers(0, 3))):
        mask[:, rng.integers(n)] = True  # dense columns
    for _ in range(int(rng.integers(0, 3))):
        mask[rng.integers(m)] = False  # empty rows
        mask[:, rng.integers(n)] = False  # empty columns
    if square and rng.random() < 0.5:
        mask |= mask.T
    if not mask.any():
        mask[rng.integers(m), rng.integers(n)] = True
    return mask


def masks(count: int, seed: int, square: bool = False) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [random_mask(rng, square) for _ in range(count)]


def forced(path: str, call):
    with _numba.colouring_path(path):
        return call()


def both(call):
    """``call()`` interpreted, then compiled."""
    return forced("python", call), forced("numba", call)


def first_visits(pa, ia, pb, ib):
    """Brute force: each vertex's distance-2 neighbours in order of first visit."""
    out = []
    for v in range(len(pa) - 1):
        seen: dict[int, None] = {}
        for w in ia[pa[v]:pa[v + 1]]:
            for x in ib[pb[w]:pb[w + 1]]:
                if x != v:
                    seen.setdefault(int(x), None)
        out.append(list(seen))
    return out


# --------------------------------------------------------------------------- kernels


@pytest.mark.parametrize("seed", range(4))
def test_distance2_kernels_are_the_compiled_ones(seed):
    for mask in masks(75, seed):
        co = coordinates(torch.from_numpy(mask))
        for side in ("rows", "columns"):
            arrays = forced("numba", lambda co=co, side=side: d2color.bipartite(co, side))
            pure = forced("python", lambda co=co, side=side: d2color.bipartite(co, side))
            for a, b in zip(arrays, pure, strict=True):
                assert a.dtype == b.dtype == np.int64 and np.array_equal(a, b)
            ptr, ind = _pycolor.distance2_graph(*arrays)
            adj = _pycolor.adjacency(ptr, ind)
            assert adj == first_visits(*arrays)  # the order the compiled DSATUR visits
            degree = d2color._degrees(*arrays)
            assert np.array_equal(np.diff(ptr), degree)
            order = np.argsort(-degree, kind="stable")
            assert _pycolor.greedy(adj, order.tolist()) == d2color._greedy(*arrays, order).tolist()
            assert (_pycolor.dsatur_buckets(adj, degree.tolist())
                    == d2color._dsatur_buckets(*arrays, degree).tolist())
            assert _pycolor.dsatur_heap(adj, degree.tolist()) == d2color._dsatur(
                *arrays, degree).tolist()
            for strategy in ("best", *d2color.BEST_OF):
                (got, tried), (want, tried_c) = both(
                    lambda a=arrays, s=strategy: d2color.color_bipartite(*a, s))
                assert got.dtype == np.int64 and np.array_equal(got, want)
                assert {k: v[0] for k, v in tried.items()} == {k: v[0] for k, v in tried_c.items()}


def test_bipartite_arrays_are_kept_per_path(monkeypatch):
    """The transposes kept on the coordinates are per path: the interpreted transpose runs
    after a compiled one on the same coordinates (and once, for both sides)."""
    co = coordinates(torch.from_numpy(masks(1, 5)[0]))
    calls = []
    real = _pycolor.transpose
    monkeypatch.setattr(_pycolor, "transpose", lambda *a: calls.append(1) or real(*a))
    compiled = forced("numba", lambda: d2color.bipartite(co, "rows"))
    assert calls == []  # the compiled counting sort
    rows = forced("python", lambda: d2color.bipartite(co, "rows"))
    assert len(calls) == 1  # its own transpose, whatever ran before
    columns = forced("python", lambda: d2color.bipartite(co, "columns"))
    assert len(calls) == 1 and all(a is b for a, b in zip(columns, rows[2:] + rows[:2],
                                                             strict=True))
    assert all(np.array_equal(a, b) for a, b in zip(compiled, rows, strict=True))
    fresh = coordinates(torch.from_numpy(masks(1, 5)[0]))
    forced("python", lambda: d2color.bipartite(fresh, "rows"))
    assert len(calls) == 2  # other coordinates: their own


def test_distance2_graph_by_lexsort_is_the_packed_one():
    for mask in masks(40, 7):
        arrays = d2color.bipartite(coordinates(torch.from_numpy(mask)), "columns")
        packed = _pycolor.distance2_graph(*arrays)
        sorted_ = _pycolor.distance2_graph(*arrays, packed=False)
        assert all(np.array_equal(a, b) for a, b in zip(packed, sorted_, strict=True))


def test_dsatur_past_one_bucket_per_key_is_the_compiled_heap():
    # 400 columns meeting in dense rows: distance-2 degrees near 400, so span² > 8 nv + 65536
    rng = np.random.default_rng(3)
    mask = rng.random((30, 400)) < 0.3
    co = coordinates(torch.from_numpy(mask))
    arrays = d2color.bipartite(co, "columns")
    span = int(d2color._degrees(*arrays).max()) + 2
    assert span * span > 8 * co.n + 65536  # the heap's branch of color_bipartite
    (got, _), (want, _) = both(lambda: d2color.color_bipartite(*arrays, "DSATUR"))
    assert np.array_equal(got, want)


@pytest.mark.parametrize("seed", range(3))
def test_hessian_kernels_are_the_compiled_ones(seed):
    for mask in masks(70, 10 + seed, square=True):
        co = coordinates(torch.from_numpy(mask))
        pure, compiled = both(lambda co=co: symmetric.symmetrized(co))
        for a, b in zip(pure, compiled, strict=True):
            assert a.dtype == b.dtype == np.int64 and np.array_equal(a, b)
        _, _, indptr, indices = compiled
        for name in greedy.ORDERS:
            seq, seq_c = both(lambda n=name, p=indptr, i=indices: greedy.order(p, i, n))
            assert seq.dtype == np.int64 and np.array_equal(seq, seq_c), name
            got, want = both(lambda s=seq, p=indptr, i=indices: star.star_coloring(p, i, s))
            assert got.dtype == np.int64 and np.array_equal(got, want), name
            got, want = both(lambda s=seq, p=indptr, i=indices: greedy.greedy(p, i, s))
            assert np.array_equal(got, want), name


@pytest.mark.parametrize("symmetric", [False, True])
@pytest.mark.parametrize("diagonal", [False, True])
@pytest.mark.parametrize("shuffled", [False, True])
@settings(max_examples=15, deadline=None)
@given(k=st.integers(1, 24), density=st.floats(0.05, 0.6), seed=st.integers(0, 2**31 - 1))
def test_symmetric_union_is_the_union_whatever_the_entries_order(k, density, seed, symmetric,
                                                                  diagonal, shuffled):
    # the interpreted union's three routes: a CSR pattern that is its own transpose with a
    # full diagonal (returned as it is), a CSR pattern merged with its radix-sorted
    # transpose, and entries in any other order (one sort)
    rng = np.random.default_rng(seed)
    mask = rng.random((k, k)) < density
    if symmetric:
        mask |= mask.T
    if diagonal:
        np.fill_diagonal(mask, True)
    rows, cols = (a.astype(np.int64) for a in np.nonzero(mask))
    if shuffled:
        perm = rng.permutation(rows.size)
        rows, cols = rows[perm], cols[perm]
    before = rows.copy(), cols.copy()
    ptr, got = symmetric_union(rows, cols, k)
    want = mask | mask.T | np.eye(k, dtype=bool)
    assert got.dtype == ptr.dtype == np.int64
    assert np.array_equal(ptr, np.r_[0, np.cumsum(want.sum(1))])
    assert np.array_equal(got, np.nonzero(want)[1])
    assert np.array_equal(rows, before[0]) and np.array_equal(cols, before[1])
    assert not np.shares_memory(got, cols)


def test_transpose_and_union_of_a_rectangular_pattern_with_empty_lines():
    mask = np.zeros((5, 7), dtype=bool)
    mask[0, [1, 6]] = mask[3, [0, 1, 6]] = True  # rows 1, 2, 4 and columns 2-5 empty
    co = coordinates(torch.from_numpy(mask))
    rptr = np.array([0, 2, 2, 2, 5, 5])
    tptr, tind = _pycolor.transpose(rptr, co.cols, 7)
    assert tptr.tolist() == [0, 1, 3, 3, 3, 3, 3, 5]
    assert tind.tolist() == [3, 0, 3, 0, 3]


# --------------------------------------------------------------------------- constructors


def summary(op) -> tuple:
    """What a SparseJacobian / SparseHessian coloured."""
    if isinstance(op, gradarg.SparseHessian):
        return op.passes, op.colors.tolist()
    split = getattr(op._mode, "split", None)
    parts = (None if split is None else (split.reverse.tolist(), split.row_colors.tolist(),
                                         split.column_colors.tolist()))
    colors = None if op.colors is None else op.colors.tolist()
    return op.mode, op.passes, op.row_colors, op.column_colors, colors, parts


@pytest.mark.parametrize("seed", range(2))
def test_constructors_colour_the_same_either_way(seed):
    for mask in masks(60, 20 + seed):
        pattern = torch.from_numpy(mask)
        got, want = both(lambda p=pattern: summary(gradarg.SparseJacobian(p)))
        assert got == want
        for side in ("rows", "columns"):
            got, want = both(lambda p=pattern, s=side: color_pattern(p, s).tolist())
            assert got == want
        co = coordinates(pattern)
        got, want = both(lambda co=co: summary_split(bidirectional_partition(co)))
        assert got == want
    for mask in masks(60, 30 + seed, square=True):
        pattern = torch.from_numpy(mask)
        got, want = both(lambda p=pattern: summary(gradarg.SparseHessian(p)))
        assert got == want


def summary_split(split) -> tuple:
    return (split.reverse.tolist(), split.row_colors.tolist(), split.column_colors.tolist(),
            split.passes)


def _problems_torch():
    spec = importlib.util.spec_from_file_location(
        "problems", ROOT / "benchmarks" / "problems.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("i", range(7))
def test_the_seven_benchmark_functions_colour_the_same_either_way(i):
    name, kind, f, x = _problems_torch().problem(i)
    if kind == "hessian":
        pattern = gradarg.hessian_sparsity(f, x)
        got, want = both(lambda: summary(gradarg.SparseHessian(pattern, x.shape)))
    else:
        pattern = gradarg.jacobian_sparsity(f, x)
        got, want = both(lambda: summary(gradarg.SparseJacobian(pattern, x.shape)))
    assert got == want, name


def test_interpreted_restores_the_garbage_collector_and_counts_its_time():
    def colour():
        with _numba.interpreted():
            inside.append(gc.isenabled())
            with _numba.interpreted():  # nested: counted once
                pass
            raise RuntimeError("inside")

    inside: list[bool] = []
    assert gc.isenabled()
    before = _numba.spent_seconds()
    with pytest.raises(RuntimeError, match="inside"):
        colour()
    assert inside == [False] and gc.isenabled()
    assert _numba.spent_seconds() > before


# --------------------------------------------------------------------------- the rule


def run(code: str) -> dict:
    """Run ``code`` in a fresh interpreter; it prints one JSON line last."""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


HEAD = """
import json, sys, torch, gradarg
from gradarg.sparse import _numba, _pycolor
def tridiagonal(n):
    i = torch.arange(n)
    return (i[:, None] - i).abs() <= 1
"""


def test_small_patterns_never_load_numba():
    got = run(HEAD + """
gradarg.SparseJacobian(tridiagonal(300))
gradarg.SparseHessian(tridiagonal(300))
gradarg.color_pattern(tridiagonal(50), "columns")
print(json.dumps({"numba": "numba" in sys.modules, "spent": _numba.spent_seconds()}))
""")
    assert got == {"numba": False, "spent": got["spent"]} and got["spent"] > 0


def test_a_large_pattern_goes_to_numba_at_once_and_then_everything_does():
    got = run(HEAD + """
import numpy as np
from gradarg.sparse import d2color
from gradarg.sparse.pattern import coordinates
from gradarg.sparse.symmetric import symmetric_union
n = 3000
big = torch.eye(n, dtype=torch.bool)
big[:1500, 0] = True  # rows 0-1499 meet in column 0, rows 1500-2999 and row 1 in column 1
big[1500:, 1] = True  # (two cliques of 1500 and 1501 rows: no row number modulo 1500 is a
# proper colouring, so d2color.modular does not settle it and a search runs)
pa, ia, pb, _ = d2color.bipartite(coordinates(big), "rows")
estimate = _pycolor.distance2_graph_seconds(pa, ia, pb)  # known before the graph
colors = gradarg.color_pattern(big, "rows")
loaded = "numba" in sys.modules
spent = _numba.spent_seconds()
gradarg.SparseHessian(tridiagonal(300))  # small, but numba is loaded now
print(json.dumps({"estimate": estimate, "startup": _numba.STARTUP_SECONDS, "loaded": loaded,
                  "colours": int(colors.max()) + 1, "spent": spent,
                  "spent_after": _numba.spent_seconds()}))
""")
    assert got["estimate"] > got["startup"]  # what makes the pattern large
    assert got["loaded"] and got["colours"] == 1501
    # no interpreted colouring: only the transpose before the decision
    assert got["spent_after"] == got["spent"]


def test_a_process_colouring_many_small_patterns_switches_to_numba():
    got = run(HEAD + """
from gradarg.sparse.pattern import coordinates
from gradarg.sparse.symmetric import symmetric_union
from gradarg.sparse import d2color
s = 40
a = torch.arange(s)
grid = ((a[:, None, None, None] - a[None, None, :, None]).abs()
        + (a[None, :, None, None] - a[None, None, None, :]).abs() <= 2).reshape(s * s, s * s)
arrays = d2color.bipartite(coordinates(grid), "rows")
ptr, ind = _pycolor.distance2_graph(*arrays)
# the estimates before and after its graph: one or the other decides
estimate = max(_pycolor.distance2_graph_seconds(*arrays[:3]),
               _pycolor.distance2_seconds(ptr, ind))
spent = []
for k in range(2000):
    spent.append(_numba.spent_seconds())
    gradarg.color_pattern(grid, "rows")
    if "numba" in sys.modules:
        break
before = spent[-2] if len(spent) > 1 else None  # before the last interpreted colouring
# the call that loaded numba charged only its transpose, made before the choice
print(json.dumps({"switched_at": k, "before": before, "spent_then": _numba.spent_seconds(),
                  "estimate": estimate,
                  "startup": _numba.STARTUP_SECONDS, "loaded": "numba" in sys.modules}))
""")
    assert got["loaded"] and got["switched_at"] > 0  # interpreted first, numba later
    # the rule: the colouring that loaded numba would have taken the account past the start-up
    assert got["spent_then"] + got["estimate"] > got["startup"]
    # ... and the one before would not have (its measured time may exceed the estimate on a
    # loaded machine, so the account before it, not after it, is what the rule saw)
    assert got["before"] + got["estimate"] <= got["startup"]
