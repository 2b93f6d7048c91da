"""First uses in a fresh process against the next ones: colouring, then calls.

Each case runs in its own Python process (``python benchmarks/first_call.py``; ``nox -s bench``
runs it with one thread).

Part 1, the first colouring, per colouring path (``gradarg.sparse._numba.PATHS``, forced with
``colouring_path``): for each of the seven functions of ``benchmarks/problems.py`` and five
patterns of other shapes (``OTHER``: a 7-point stencil on 16³, a 9-point stencil on 48²,
block-tridiagonal 256 × 8, three bands at n = 3000, a random 3000 × 1000), the pattern is
detected (or built), then ``SparseJacobian(pattern, x.shape)`` / ``SparseHessian(pattern,
x.shape)`` is built once in a fresh process (``1st``: import of the path's library and start-up
included) and five more times (``warm``, median; ``--cpu``: process CPU time, for a busy machine; ``--colour-only``: part
1 only), with the path forced: ``default`` (the rule:
interpreted until numba pays), ``rustworkx`` (forced only), ``python`` (interpreted) and
``numba`` (its first build loads numba).  ``passes`` are the colours of each; a
path that needs more passes than ``python`` (the reference: bit for bit numba's colourings) is
flagged.  Target of issue 45: the default's first construction within 2× asdex's colouring
(``nox -s bench-asdex`` prints both).

Part 2, the first call: detection, construction (colouring, the decompression plan), the
first call and the median of five more.  Target of issue 29: the first call costs what the
next ones cost (the one-off work is done at construction).
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

CASES = ("hessian", "jacobian-forward")
PATHS = ("default", "rustworkx", "python", "numba")


def other_pattern(name: str):
    """``(pattern, x_shape)`` of one of :data:`OTHER` (bool, dense or COO)."""
    import numpy as np
    import torch

    def coo(rows, cols, m, n):
        idx = torch.stack([torch.as_tensor(rows), torch.as_tensor(cols)])
        return torch.sparse_coo_tensor(idx, torch.ones(idx.shape[1], dtype=torch.bool),
                                       (m, n), check_invariants=True).coalesce()

    def stencil(shape, offsets):
        idx = np.arange(int(np.prod(shape))).reshape(shape)
        rows, cols = [], []
        for off in offsets:
            src = tuple(slice(max(0, -o), s - max(0, o)) for o, s in zip(off, shape, strict=True))
            dst = tuple(slice(max(0, o), s - max(0, -o)) for o, s in zip(off, shape, strict=True))
            rows.append(idx[src].ravel())
            cols.append(idx[dst].ravel())
        n = idx.size
        return coo(np.concatenate(rows), np.concatenate(cols), n, n), (n,)

    if name == "7-point 16^3":
        offs = [(0, 0, 0)] + [tuple(d if k == a else 0 for k in range(3)) for a in range(3)
                              for d in (-1, 1)]
        return stencil((16, 16, 16), offs)
    if name == "9-point 48^2":
        return stencil((48, 48), [(a, b) for a in (-1, 0, 1) for b in (-1, 0, 1)])
    if name == "block-tridiagonal 256x8":
        blocks, b = 256, 8
        i = np.arange(blocks * b)
        rows = np.repeat(i, 3 * b)
        blk = rows // b
        cols = ((blk + np.tile(np.repeat([-1, 0, 1], b), blocks * b)) * b
                + np.tile(np.arange(b), 3 * blocks * b))
        ok = (cols >= 0) & (cols < blocks * b)
        return coo(rows[ok], cols[ok], blocks * b, blocks * b), (blocks * b,)
    if name == "three bands n=3000":
        return stencil((3000,), [(-1,), (0,), (1,)])
    if name == "random 3000x1000":
        rng = np.random.default_rng(0)
        rows = np.repeat(np.arange(3000), 5)
        return coo(rows, rng.integers(0, 1000, rows.size), 3000, 1000), (1000,)
    raise ValueError(name)


OTHER = ("7-point 16^3", "9-point 48^2", "block-tridiagonal 256x8", "three bands n=3000",
         "random 3000x1000")


def colour_child(case: str, path: str) -> None:
    import torch

    torch.set_num_threads(1)
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import gradarg
    from gradarg.sparse import _numba

    if case.isdigit():
        from problems import problem

        name, kind, f, x = problem(int(case))
        hessian = kind == "hessian"
        pattern = (gradarg.hessian_sparsity if hessian else gradarg.jacobian_sparsity)(f, x)
        shape = x.shape
    else:
        name, hessian = case, False
        pattern, shape = other_pattern(case)
    build = gradarg.SparseHessian if hessian else gradarg.SparseJacobian
    times = []
    clock = time.process_time if "--cpu" in sys.argv else time.perf_counter
    with _numba.colouring_path(None if path == "default" else path):
        for _ in range(6):
            t = clock()
            op = build(pattern, shape)
            times.append(clock() - t)
            if len(times) == 1:
                took = _numba.last_path()
    print(json.dumps({"name": name, "first_ms": 1e3 * times[0],
                      "warm_ms": 1e3 * statistics.median(times[1:]), "took": took,
                      "passes": op.passes}))


def colour_table() -> bool:
    """Part 1; True if no path needs more passes than the interpreted (numba's) colouring."""
    from problems import PROBLEMS

    print("first construction in a fresh process ('1st', start-up included) and warm (median "
          "of 5), ms, per colouring path; one thread; passes (* = more than 'python')")
    print(f"{'pattern':30s} " + " ".join(f"{p + ' 1st/warm':>19s} {'pass':>4s}" for p in PATHS))
    ok = True
    for case in [str(i) for i in range(len(PROBLEMS))] + list(OTHER):
        row = {}
        for path in PATHS:
            cpu = ["--cpu"] if "--cpu" in sys.argv else []
            out = subprocess.run([sys.executable, __file__, "--colour", case, path, *cpu],
                                 capture_output=True, text=True, check=True)
            row[path] = json.loads(out.stdout.strip().splitlines()[-1])
        ref = row["python"]["passes"]
        cells = []
        for path in PATHS:
            r = row[path]
            more = r["passes"] > ref
            ok &= not more
            cells.append(f"{r['first_ms']:9.1f}/{r['warm_ms']:9.2f} {r['passes']:3d}"
                         f"{'*' if more else ' '}")
        print(f"{row['python']['name'][:30]:30s} " + " ".join(cells))
    return ok


def child(case: str) -> None:
    import torch

    import gradarg

    n = 5000
    x = torch.randn(n, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    if case == "hessian":
        def f(x):  # chained Rosenbrock
            a, b = x[:-1], x[1:]
            return (100 * (b - a**2) ** 2 + (1 - a) ** 2).sum()

        pattern = gradarg.hessian_sparsity(f, x)
        t0 = time.perf_counter()
        op = gradarg.SparseHessian(pattern, x.shape)
    else:
        def f(x):  # a tall stencil: more outputs than inputs, forward mode
            return torch.cat([torch.sin(x[1:] - x[:-1]), x**2, torch.exp(x[:-2] * x[2:])])

        pattern = gradarg.jacobian_sparsity(f, x)
        t0 = time.perf_counter()
        op = gradarg.SparseJacobian(pattern, x.shape, method="forward")
    built = time.perf_counter() - t0
    times = []
    for _ in range(6):
        t = time.perf_counter()
        op(f, x)
        times.append(time.perf_counter() - t)
    print(json.dumps({"construct_ms": 1e3 * built, "first_ms": 1e3 * times[0],
                      "next_ms": 1e3 * statistics.median(times[1:])}))


def main() -> None:
    if len(sys.argv) == 3 and sys.argv[1] == "--child":
        child(sys.argv[2])
        return
    if len(sys.argv) >= 4 and sys.argv[1] == "--colour":
        colour_child(sys.argv[2], sys.argv[3])
        return
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    colour_table()
    if "--colour-only" in sys.argv:
        return
    print()
    print("first call in a fresh process against the next ones (n = 5000, float64)")
    print(f"{'case':18s} {'construct ms':>13s} {'first call ms':>14s} {'next ms':>8s} ratio")
    for case in CASES:
        out = subprocess.run([sys.executable, __file__, "--child", case], capture_output=True,
                             text=True, check=True)
        r = json.loads(out.stdout.strip().splitlines()[-1])
        print(f"{case:18s} {r['construct_ms']:13.1f} {r['first_ms']:14.1f} {r['next_ms']:8.2f} "
              f"{r['first_ms'] / r['next_ms']:5.1f}x")


if __name__ == "__main__":
    main()
