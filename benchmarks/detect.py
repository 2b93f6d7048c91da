"""Pattern detection by tracing (``gradarg.jacobian_sparsity``) against the local detector.

Run as ``python benchmarks/detect.py`` (``nox -s bench``).  Per case: the time of
``jacobian_sparsity`` (global pattern, traced) and of ``sparsity_pattern`` (three dense Jacobians
at random points), medians of 3 runs after one warm-up call, and whether the patterns agree.
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

import torch

from gradarg import jacobian_sparsity, sparsity_pattern

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "sparse"))
from problems import brusselator, stencil_1d, stencil_2d

CASES = [
    ("Brusselator 32x32", brusselator, (2, 32, 32)),
    ("5-point 64x64", stencil_2d, (64, 64)),
    ("tridiagonal n=4096", stencil_1d, (4096,)),
]


def median_time(call, repeats=3):
    call()
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        call()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def main() -> None:
    print(f"{'case':<20} {'traced':>10} {'local (3 Jacobians)':>20} {'ratio':>7}  agree")
    for name, f, shape in CASES:
        x = torch.rand(shape, dtype=torch.float64)
        t_trace = median_time(lambda f=f, x=x: jacobian_sparsity(f, x))
        t_local = median_time(lambda f=f, x=x: sparsity_pattern(f, x), repeats=1)
        agree = torch.equal(jacobian_sparsity(f, x, layout=torch.strided), sparsity_pattern(f, x))
        print(f"{name:<20} {t_trace * 1e3:8.1f} ms {t_local * 1e3:17.1f} ms "
              f"{t_local / t_trace:6.1f}x  {agree}")


if __name__ == "__main__":
    main()
