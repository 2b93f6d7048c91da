"""Class: a ``ReduceLROnPlateau`` whose metric never improves in the epochs it counts cuts the
learning rate at every chance its ``patience`` and ``cooldown`` give; the usual cause is a
``mode`` opposite to the metric (``mode='max'`` given a falling loss).  The watch names such a
scheduler when it made two cuts or more, and never one whose metric improved in a counted
epoch; at its floor (where a bad epoch and an improvement leave its state alike), the number
of improvements it states as a bound holds.

The truth comes from torch alone: the scheduler is stepped with a generated metric and the
learning rate after each of its steps is read; an epoch is counted unless it falls in the
``cooldown`` epochs after a cut (seen as a drop of the learning rate); the scheduler saw no
improvement when, in every counted epoch after the first, the metric was not better than the
best before it by the scheduler's threshold (``threshold_mode='rel'``, PyTorch's documented
rule).  Generated: the mode, the metric's course, patience, cooldown, factor, the number of
epochs, the seed.
"""

from __future__ import annotations

import re

import torch
from hypothesis import example, given, settings
from hypothesis import strategies as st
from torch import nn
from torch.nn import functional as F

import gradarg


def _metric(course, epochs, rng):
    if course == "falling":
        return [1.0 / (i + 1) for i in range(epochs)]
    if course == "rising":
        return [1.0 - 1.0 / (i + 2) for i in range(epochs)]
    if course == "flat-then-better":
        return [0.5] * (epochs - 1) + [0.1 if epochs > 1 else 0.5]
    return [float(rng.uniform(0.1, 1.0)) for _ in range(epochs)]  # noisy


def _better(mode, a, best, threshold=1e-4):
    return a < best * (1 - threshold) if mode == "min" else a > best * (1 + threshold)


@settings(max_examples=40, deadline=None)
@given(mode=st.sampled_from(["min", "max"]),
       course=st.sampled_from(["falling", "rising", "flat-then-better", "noisy"]),
       patience=st.integers(0, 3), cooldown=st.integers(0, 2),
       factor=st.sampled_from([0.1, 0.5]), epochs=st.integers(1, 14), seed=st.integers(0, 99))
@example(mode="min", course="flat-then-better", patience=0, cooldown=0, factor=0.1, epochs=9,
         seed=0)  # the last epoch improves, at the floor
@example(mode="min", course="noisy", patience=0, cooldown=0, factor=0.1, epochs=9,
         seed=51)  # an improvement delays the cuts; the floor is reached at the last epoch
@example(mode="max", course="noisy", patience=0, cooldown=1, factor=0.1, epochs=5,
         seed=1)  # a delayed last cut, as many cuts: told by the cooldown counter
def test_a_plateau_scheduler_that_never_saw_an_improvement_is_named(mode, course, patience,
                                                                     cooldown, factor, epochs,
                                                                     seed):
    import random

    torch.manual_seed(seed)
    model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    sched = torch.optim.lr_scheduler.ReduceLROnPlateau(opt, mode=mode, factor=factor,
                                                       patience=patience, cooldown=cooldown)
    metric = _metric(course, epochs, random.Random(seed))
    lrs = []
    for value in metric:
        sched.step(value)
        lrs.append(opt.param_groups[0]["lr"])
    # the truth: cuts from torch's learning rates; counted epochs skip the cooldown after a cut
    cuts = [i for i in range(epochs) if lrs[i] < (lrs[i - 1] if i else 0.1)]
    cooling = {i + k for i in cuts for k in range(1, cooldown + 1)}
    # at its floor (the next cut below eps) a bad epoch and an improvement leave the
    # scheduler's state alike: only the epochs up to its last cut are known
    floor = bool(cuts) and lrs[-1] * (1 - factor) <= 1e-8
    known = cuts[-1] + 1 if floor else epochs
    best, improved = metric[0], 0  # improvements in counted epochs up to `known`
    for i in range(1, known):
        if _better(mode, metric[i], best):
            best = metric[i]
            improved += i not in cooling
    x, y = torch.randn(16, 4), torch.randn(16, 1)
    with gradarg.watch(model) as w:
        opt.zero_grad()
        F.mse_loss(model(x), y).backward()
        opt.step()
    problems = " ".join(w.problems())
    named = re.search(rf"ReduceLROnPlateau\(mode='{mode}', patience={patience}\) cut the "
                      rf"learning rate of SGD {len(cuts)} times in {epochs} epochs", problems)
    bound = re.search(r"the metric improved in at most (\d+) of the epochs it counted", problems)
    if not floor:  # the state speaks for every epoch: named exactly when none improved
        assert bool(named) == (not improved and len(cuts) >= 2), (metric, lrs, problems)
        assert not bound, problems
    else:  # at its floor: named when none improved, and a bound it states is true
        assert bool(named) >= (not improved and len(cuts) >= 2), (metric, lrs, problems)
        assert bool(named) <= (len(cuts) >= 2), problems
        if named and not bound:
            assert not improved, (metric, lrs, problems)
        if bound:
            assert improved <= int(bound[1]) < epochs, (metric, lrs, problems)
    del sched
