"""Class: an optimizer step at a learning rate of 0 that a learning-rate scheduler set (a cosine
schedule whose ``T_max`` counts epochs, stepped after every batch).  When the summary says a
step ran at learning rate 0, it names the scheduler whose ``step()`` set it and that
scheduler's step count; it never says a scheduler set it to 0 when no scheduler step did.

The truth is the test's own reading of ``optimizer.param_groups[0]["lr"]`` right after each
scheduler step (plain torch), and before each optimizer step.
"""

from __future__ import annotations

import math

import torch
from hypothesis import example, given, settings
from hypothesis import strategies as st
from torch import nn
from torch.optim import lr_scheduler as sched

import gradarg

SCHEDULES = {
    "CosineAnnealingLR": lambda opt, k: sched.CosineAnnealingLR(opt, T_max=k),
    "LinearLR": lambda opt, k: sched.LinearLR(opt, 1.0, 0.0, total_iters=k),
    "StepLR": lambda opt, k: sched.StepLR(opt, step_size=k, gamma=0.0),
    "LambdaLR warm-up": lambda opt, k: sched.LambdaLR(opt, lambda e: min(1.0, e / k)),
    "ExponentialLR": lambda opt, k: sched.ExponentialLR(opt, gamma=0.5),
}


@settings(max_examples=30, deadline=None)
@given(kind=st.sampled_from(sorted(SCHEDULES)), k=st.integers(1, 3), batches=st.integers(1, 4),
       seed=st.integers(0, 999))
@example(kind="LambdaLR warm-up", k=1, batches=1, seed=0)  # lr 0 from the constructor
def test_a_learning_rate_of_zero_is_traced_to_the_scheduler_step_that_set_it(kind, k, batches,
                                                                               seed):
    torch.manual_seed(seed)
    model = nn.Sequential(nn.Linear(4, 6), nn.Tanh(), nn.Linear(6, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    made_zero = opt.param_groups[0]["lr"] == 0.0  # the constructor's own step
    schedule = SCHEDULES[kind](opt, k)
    first_zero = 0 if opt.param_groups[0]["lr"] == 0.0 else None
    used = []
    x, y = torch.randn(8, 4), torch.randn(8, 1)
    with gradarg.watch(model) as w:
        for _ in range(batches):
            opt.zero_grad()
            nn.functional.mse_loss(model(x), y).backward()
            used.append(opt.param_groups[0]["lr"])
            opt.step()
            schedule.step()
            if first_zero is None and opt.param_groups[0]["lr"] == 0.0:
                first_zero = schedule.last_epoch
    assert not made_zero
    text = w.summary(checks=False)
    if "set it to 0" in text:
        assert first_zero is not None and any(lr == 0.0 for lr in used), text
        assert f"{type(schedule).__name__} " in text and f"at its step {first_zero}" in text
    if any(lr == 0.0 for lr in used) and "learning rate is 0" in text:
        if first_zero == 0:  # the scheduler's constructor, before the block: not observed
            assert "set it to 0" not in text and "factor is 0 at step 0" in text, text
        else:
            assert "set it to 0" in text, text
    if all(lr > 0 and math.isfinite(lr) for lr in used):
        assert "set it to 0" not in text, text
