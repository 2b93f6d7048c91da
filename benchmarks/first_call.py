"""First uses in a fresh process against the next ones: colouring, then calls.

Each case runs in its own Python process (``python benchmarks/first_call.py``; ``nox -s bench``
runs it with one thread).

Part 1, the first colouring: for each of the seven functions of ``benchmarks/
problems.py`` (the sparse benchmarks' functions), the pattern is detected, then
``SparseJacobian(pattern, x.shape)`` / ``SparseHessian(pattern, x.shape)`` is built once
(``first``) and five more times (``same process``, median: numba not loaded, unless the first
build loaded it).  Then numba is forced (``gradarg.sparse._numba.FORCE``): one build loads its
kernels (``numba 1st``: what the first build would cost without the numba-free path; it
includes compiling, once per installation, when numba's cache is cold) and five more give the
warm construction (``warm``, median), whose colouring must be the same.  Nothing else is
loaded at construction: the eager passes need none of torch's forward-mode machinery
(``gradarg.sparse.passes``).  Target of issue 38: ``first`` at most 50 ms more than ``warm``.

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
TARGET_MS = 50.0  # issue 38: first construction within this of a warm one


def colour_child(i: int) -> None:
    import torch

    torch.set_num_threads(1)
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from problems import problem

    import gradarg

    name, kind, f, x = problem(i)
    hessian = kind == "hessian"
    pattern = (gradarg.hessian_sparsity if hessian else gradarg.jacobian_sparsity)(f, x)
    build = gradarg.SparseHessian if hessian else gradarg.SparseJacobian
    times = []
    for _ in range(6):
        t = time.perf_counter()
        op = build(pattern, x.shape)
        times.append(time.perf_counter() - t)
        if len(times) == 1:
            numba = "numba" in sys.modules
    # then numba's: its start-up (the first build) and warm builds
    from gradarg.sparse import _numba

    _numba.FORCE = "numba"
    compiled = []
    for _ in range(6):
        t = time.perf_counter()
        other = build(pattern, x.shape)
        compiled.append(time.perf_counter() - t)
    same = summary(other) == summary(op)
    print(json.dumps({"name": name, "first_ms": 1e3 * times[0],
                      "warm_ms": 1e3 * statistics.median(times[1:]),
                      "numba_first_ms": 1e3 * compiled[0],
                      "numba_warm_ms": 1e3 * statistics.median(compiled[1:]),
                      "numba": numba,
                      "same": same, "passes": op.passes}))


def summary(op) -> tuple:
    """What a SparseJacobian / SparseHessian coloured: mode, passes, colours (or the split)."""
    split = getattr(op._mode, "split", None)
    parts = None if split is None else (split.reverse.tolist(), split.row_colors.tolist(),
                                        split.column_colors.tolist())
    colors = None if op.colors is None else op.colors.tolist()
    return getattr(op, "mode", None), op.passes, colors, parts


def colour_table() -> bool:
    """Part 1; True if every function meets the target."""
    from problems import PROBLEMS

    print("first construction in a fresh process against a warm one (numba's kernels loaded, "
          f"median of 5), one thread; target: at most {TARGET_MS:.0f} ms more.")
    print("'same process': later builds without numba; 'numba 1st': what loading numba "
          "costs instead")
    print(f"{'function':30s} {'first':>7s} {'warm':>6s} {'diff':>6s} {'same process':>12s} "
          f"{'numba 1st':>9s} {'numba':>5s} verdict (ms)")
    ok = True
    for i in range(len(PROBLEMS)):
        out = subprocess.run([sys.executable, __file__, "--colour", str(i)], capture_output=True,
                             text=True, check=True)
        r = json.loads(out.stdout.strip().splitlines()[-1])
        diff = r["first_ms"] - r["numba_warm_ms"]
        holds = diff <= TARGET_MS and r["same"]
        ok &= holds
        print(f"{r['name']:30s} {r['first_ms']:7.1f} {r['numba_warm_ms']:6.2f} {diff:6.1f} "
              f"{r['warm_ms']:12.2f} {r['numba_first_ms']:9.0f} "
              f"{'yes' if r['numba'] else 'no':>5s} {'HOLDS' if holds else 'FAILS'}"
              f"{'' if r['same'] else ' (colourings differ)'}")
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
    if len(sys.argv) == 3 and sys.argv[1] == "--colour":
        colour_child(int(sys.argv[2]))
        return
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    colour_table()
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
