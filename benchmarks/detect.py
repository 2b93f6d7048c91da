"""Pattern detection by tracing (``gradarg.jacobian_sparsity``) against the local detector.

Run as ``python benchmarks/detect.py`` (``nox -s bench``).  Per case: the time of
``jacobian_sparsity`` (global pattern, traced) and of ``sparsity_pattern`` (three dense Jacobians
at random points), medians of 3 runs after one warm-up call, and whether the patterns agree.
"""

from __future__ import annotations

import statistics
import time

import torch
import torch.nn.functional as F

from gradarg import jacobian_sparsity, sparsity_pattern


def tridiagonal(u):
    up = F.pad(u, (1, 1))
    return up[:-2] - 2 * u + up[2:] + torch.sin(u)


def five_point(u):
    up = F.pad(u, (1, 1, 1, 1))
    return up[:-2, 1:-1] + up[2:, 1:-1] + up[1:-1, :-2] + up[1:-1, 2:] - 4 * u + u**3


def lap(a):
    return sum(torch.roll(a, s, d) for s in (1, -1) for d in (0, 1)) - 4 * a


def brusselator(z):
    u, v = z[0], z[1]
    return torch.stack([1 + u * u * v - 4.4 * u + 3.4 * lap(u), 3.4 * u - u * u * v + 3.4 * lap(v)])


CASES = [
    ("Brusselator 32x32", brusselator, (2, 32, 32)),
    ("5-point 64x64", five_point, (64, 64)),
    ("tridiagonal n=4096", tridiagonal, (4096,)),
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
