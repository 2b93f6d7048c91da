"""The first call of a compressed Hessian / Jacobian in a fresh process against the next one.

Each case runs in its own Python process (``python benchmarks/first_call.py``; ``nox -s bench``
runs it with one thread): detection, construction (colouring, and the one-off loading of
torch's forward-mode machinery), the first call and the median of five more.  Target of
issue 29: the first call costs what the next ones cost (the one-off work is done at
construction).
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import time

CASES = ("hessian", "jacobian-forward")


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
