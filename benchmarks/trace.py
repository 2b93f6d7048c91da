"""Cost of ``gradarg.trace_backward`` against a plain ``backward`` on a 10-layer MLP.

Run as ``python benchmarks/trace.py`` (``nox -s bench`` runs it after the Jacobian table, with
``OMP_NUM_THREADS=1``). The MLP has 10 ``Linear`` layers of width 256 with ReLU between them,
a batch of 64, float32, and a mean-squared loss. Each sample rebuilds the forward pass (not
timed) and times one backward: plain ``loss.backward()`` or ``trace_backward(loss)``. Samples
alternate between the two (in a shuffled order per repeat), so machine noise hits both alike;
the figure is the ratio of the medians. Target: at most 3x.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time

import torch

import gradarg

LAYERS, WIDTH, BATCH = 10, 256, 64


def make(seed: int = 0):
    torch.manual_seed(seed)
    mods = []
    for i in range(LAYERS):
        mods.append(torch.nn.Linear(WIDTH, WIDTH))
        if i < LAYERS - 1:
            mods.append(torch.nn.ReLU())
    net = torch.nn.Sequential(*mods)
    return net, torch.randn(BATCH, WIDTH), torch.randn(BATCH, WIDTH)


def sample(net, x, target, traced: bool) -> float:
    net.zero_grad(set_to_none=True)
    loss = torch.nn.functional.mse_loss(net(x), target)
    t0 = time.perf_counter()
    if traced:
        gradarg.trace_backward(loss)
    else:
        loss.backward()
    return time.perf_counter() - t0


def main(argv=None) -> float:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=60)
    args = ap.parse_args(argv)
    net, x, target = make()
    for traced in (False, True, False, True):  # warm-up
        sample(net, x, target, traced)
    times = {False: [], True: []}
    rng = random.Random(0)
    for _ in range(args.repeats):
        order = [False, True]
        rng.shuffle(order)
        for traced in order:
            times[traced].append(sample(net, x, target, traced))
    plain, traced = statistics.median(times[False]), statistics.median(times[True])
    ratio = traced / plain
    print(f"trace_backward vs backward, {LAYERS}-layer MLP width {WIDTH} batch {BATCH} "
          f"(torch {torch.__version__}, {torch.get_num_threads()} thread(s), "
          f"median of {args.repeats} interleaved runs):")
    print(f"  backward {plain * 1e3:.2f} ms, trace_backward {traced * 1e3:.2f} ms, "
          f"ratio {ratio:.2f}x (target <= 3x)")
    return ratio


if __name__ == "__main__":
    main()
