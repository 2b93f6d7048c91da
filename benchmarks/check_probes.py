"""How much cheaper the random probes of check_backward are than the full comparison.

A custom Function without a ``jvp`` (so the reference is finite differences), elementwise,
with a right backward: ``check_backward(..., localize=False)`` runs only the random probes
(``vᵀJu`` per probe: one backward pass per output, one directional difference per input),
``localize=True`` builds both full Jacobians.  Median of interleaved repeats, one thread;
printed as the ratio full / probes.

    OMP_NUM_THREADS=1 python benchmarks/check_probes.py
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

import torch

import gradarg

# the corpus's right x² Function (no jvp, so the reference is finite differences)
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "check"))
from backward_corpus import Square


def main(sizes=(100, 300, 1000), repeats=3) -> None:
    torch.set_num_threads(1)
    print("| n | probes only (s) | full Jacobians (s) | full / probes |")
    print("|---|---|---|---|")
    for n in sizes:
        x = torch.randn(n, dtype=torch.float64, requires_grad=True)
        times = {False: [], True: []}
        for _ in range(repeats):
            for localize in (False, True):
                t = time.perf_counter()
                r = gradarg.check_backward(Square.apply, x, localize=localize)
                times[localize].append(time.perf_counter() - t)
                assert r
        probe, full = statistics.median(times[False]), statistics.median(times[True])
        print(f"| {n} | {probe:.3f} | {full:.3f} | {full / probe:.0f}× |")


if __name__ == "__main__":
    main()
