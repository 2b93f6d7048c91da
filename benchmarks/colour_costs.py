"""How well the interpreted colourings' cost estimates predict their time (gradarg.sparse._pycolor).

``gradarg.sparse._numba.use_numba`` sends a colouring to numba when its estimated interpreted
time (plus what the process has spent so far) exceeds numba's start-up; the estimates are
linear in counts read off the pattern, with constants fitted here.  Run as
``python benchmarks/colour_costs.py`` (one thread): for patterns whose interpreted colouring
takes 1 ms to about 1 s (stencils, bands, random lines, the sparse benchmarks' functions
scaled up), each interpreted step is timed (best of 3, garbage collector paused, as in
``interpreted()``) against its estimate:

* ``graph``: the distance-2 graph, vectorised (``distance2_graph``), against the graph's part
  of ``distance2_graph_seconds`` (steps of the walks ``Σ_w len(w)²``, vertices);
* ``colour``: largest-first and DSATUR on that graph (both always), against
  ``distance2_seconds`` (edges, far edges, vertices);
* ``star``: one star colouring of a symmetric pattern's graph, against ``star_seconds``
  (edges, far edges, pairs of adjacent edges ``Σ deg²``, vertices);
* ``order``: the smallest-last order, against ``order_seconds`` (edges, far edges, vertices).

A far edge joins vertices more than 4096 apart: the interpreter's objects for the two lie far
apart in memory, and a random pattern's colouring costs 2–4 times a band's per edge.

``--fit`` prints the least-squares constants of each (relative error) as well.  The estimate
should not fall far below the measured time where a colouring nears numba's start-up (0.1–1 s):
there an underestimate keeps the interpreter for too long, an overestimate loads numba early.
"""

from __future__ import annotations

import argparse
import gc
import time

import numpy as np
import torch

from gradarg.sparse import _pycolor, d2color, greedy, symmetric
from gradarg.sparse._numba import STARTUP_SECONDS
from gradarg.sparse.pattern import Coordinates


def pattern(rows, cols, m: int, n: int) -> Coordinates:
    key = np.unique(np.asarray(rows, np.int64) * n + np.asarray(cols, np.int64))
    return Coordinates(key // n, key % n, m, n, None, None)


def band(n: int, half: int) -> Coordinates:
    i = np.arange(n)
    pairs = [(i[max(0, -d):n - max(0, d)], i[max(0, d):n - max(0, -d)])
             for d in range(-half, half + 1)]
    return pattern(np.concatenate([a for a, _ in pairs]), np.concatenate([b for _, b in pairs]),
                   n, n)


def grid(s: int, reach: int = 1, species: int = 1) -> Coordinates:
    """A ``reach``-diamond stencil on an ``s × s`` grid, ``species`` coupled fields."""
    idx = np.arange(s * s).reshape(s, s)
    rows, cols = [], []
    for dx in range(-reach, reach + 1):
        for dy in range(-reach, reach + 1):
            if abs(dx) + abs(dy) > reach:
                continue
            a = idx[max(0, -dx):s - max(0, dx), max(0, -dy):s - max(0, dy)].ravel()
            b = idx[max(0, dx):s - max(0, -dx), max(0, dy):s - max(0, -dy)].ravel()
            for p in range(species):
                rows.append(a + p * s * s)
                cols.append(b + p * s * s)
    for p in range(species):  # the fields couple at each point
        for q in range(species):
            rows.append(idx.ravel() + p * s * s)
            cols.append(idx.ravel() + q * s * s)
    n = species * s * s
    return pattern(np.concatenate(rows), np.concatenate(cols), n, n)


def random_lines(m: int, n: int, k: int, seed: int = 0) -> Coordinates:
    rng = np.random.default_rng(seed)
    return pattern(np.repeat(np.arange(m), k), rng.integers(0, n, m * k), m, n)


CASES = [
    ("band 1, n=16384", band(16384, 1)), ("band 2, n=100000", band(100_000, 2)),
    ("band 5, n=20000", band(20_000, 5)), ("band 10, n=8192", band(8192, 10)),
    ("5-point 64x64", grid(64)), ("5-point 200x200", grid(200)),
    ("13-point 100x100", grid(100, 2)), ("25-point 60x60", grid(60, 3)),
    ("2 species 150x150", grid(150, 1, 2)),
    ("random 3/row 50000", random_lines(50_000, 50_000, 3)),
    ("random 5/row 3000x1000", random_lines(3000, 1000, 5)),
    ("random 30/row 1000", random_lines(1000, 1000, 30)),
    ("random 40/row 300x6000", random_lines(300, 6000, 40)),
    ("random 3/row 20000", random_lines(20_000, 20_000, 3, 1)),
    ("random 4/row 8000", random_lines(8000, 8000, 4, 2)),
]


def best(call, repeats: int = 3) -> float:
    times = []
    for _ in range(repeats):
        gc.disable()
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
        gc.enable()
    return min(times)


def measure() -> dict[str, list[tuple[str, list[float], float, float]]]:
    """Per step: (case, counts, seconds, estimate)."""
    out: dict[str, list[tuple[str, list[float], float, float]]] = {
        "graph": [], "colour": [], "star": [], "order": []}
    for name, co in CASES:
        for side in ("rows", "columns"):
            pa, ia, pb, ib = d2color.bipartite(co, side)
            nv = len(pa) - 1
            lengths = np.diff(pb).astype(float)
            walk = float(lengths @ lengths)
            seconds = best(lambda a=(pa, ia, pb, ib): _pycolor.distance2_graph(*a))
            estimate = _pycolor._GRAPH[0] * walk + _pycolor._GRAPH[1] * nv  # the graph's part
            out["graph"].append((f"{name} {side}", [walk, nv], seconds, estimate))
            ptr, ind = _pycolor.distance2_graph(pa, ia, pb, ib)

            def colour(ptr=ptr, ind=ind):
                adj = _pycolor.adjacency(ptr, ind)
                degree = np.diff(ptr)
                _pycolor.greedy(adj, np.argsort(-degree, kind="stable").tolist())
                _pycolor.dsatur_buckets(adj, degree.tolist())

            far = _pycolor.far_edges(ptr, ind)
            out["colour"].append((f"{name} {side}", [float(ind.size), far, nv], best(colour),
                                  _pycolor.distance2_seconds(ptr, ind)))
        if co.m != co.n:
            continue
        _, _, indptr, indices = symmetric.symmetrized(co)
        degree = np.diff(indptr).astype(float)
        far = _pycolor.far_edges(indptr, indices)
        counts = [float(indptr[-1]), far, float(degree @ degree), float(co.n)]
        adj = _pycolor.adjacency(indptr, indices)
        sequence = greedy.order(indptr, indices, "smallest_last").tolist()
        out["star"].append((name, counts, best(lambda a=adj, s=sequence: _pycolor.star(a, s)),
                            _pycolor.star_seconds(indptr, indices)))
        top = int(degree.max()) + 2
        keys = np.diff(indptr).tolist()
        out["order"].append((name, [counts[0], far, counts[3]], best(
            lambda a=adj, k=keys, t=top: _pycolor.bucket_order(a, k, False, -1, t)),
            _pycolor.order_seconds(indptr, indices)))
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--fit", action="store_true", help="print least-squares constants")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    print(f"interpreted colourings: measured against estimated (numba's start-up taken as "
          f"{STARTUP_SECONDS:.2f} s)")
    for step, rows in measure().items():
        print(f"\n{step}")
        for name, _, seconds, estimate in rows:
            print(f"  {name:36s} {seconds * 1e3:9.2f} ms  estimated {estimate * 1e3:9.2f} ms  "
                  f"ratio {seconds / estimate:5.2f}")
        ratios = np.array([s / e for _, _, s, e in rows])
        print(f"  measured / estimated: median {np.median(ratios):.2f}, max {ratios.max():.2f}")
        if args.fit:
            counts = np.array([c for _, c, _, _ in rows])
            seconds = np.array([s for _, _, s, _ in rows])
            coef, *_ = np.linalg.lstsq(counts / seconds[:, None], np.ones(len(rows)),
                                       rcond=None)
            print("  fit (seconds per count): " + ", ".join(f"{c:.3g}" for c in coef))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
