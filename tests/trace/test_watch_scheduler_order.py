"""Class: a learning-rate scheduler stepped before its optimizer's first step is named instead
of "ok" (the optimizer skips the first value of the schedule), and never otherwise.

The truth comes from torch alone: the warning ``LRScheduler.step`` itself gives in that case
("Detected call of `lr_scheduler.step()` before `optimizer.step()`"), recorded by the test in
a plain run of the same iterations (the watched run ignores it, as a user's filter would), and the learning rate the first
update used, read from the parameters before and after it.  Generated: the order within each
iteration, the scheduler, the optimizer, whether scheduler and optimizer are built inside the
block, whole iterations run before the block, the number of iterations.
"""

from __future__ import annotations

import warnings

import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn
from torch.optim import lr_scheduler as sched

import gradarg

TORCH_SAYS = "Detected call of `lr_scheduler.step()` before `optimizer.step()`"

SCHEDULERS = {
    "StepLR": lambda o: sched.StepLR(o, step_size=1, gamma=0.5),
    "ExponentialLR": lambda o: sched.ExponentialLR(o, gamma=0.9),
    "LambdaLR": lambda o: sched.LambdaLR(o, lambda k: 1.0 / (k + 1)),
    "MultiStepLR": lambda o: sched.MultiStepLR(o, milestones=[1, 2], gamma=0.1),
    "CosineAnnealingLR": lambda o: sched.CosineAnnealingLR(o, T_max=4),
    "OneCycleLR": lambda o: sched.OneCycleLR(o, max_lr=0.2, total_steps=20),
}
OPTIMIZERS = {
    "SGD": lambda p: torch.optim.SGD(p, lr=0.1),
    "SGD momentum": lambda p: torch.optim.SGD(p, lr=0.1, momentum=0.9),
    "Adam": lambda p: torch.optim.Adam(p, lr=0.1),
    "RMSprop": lambda p: torch.optim.RMSprop(p, lr=0.1),
}


def iteration(model, opt, scheduler, x, y, scheduler_first: bool) -> None:
    opt.zero_grad()
    nn.functional.mse_loss(model(x), y).backward()
    if scheduler_first:
        scheduler.step()
    opt.step()
    if not scheduler_first:
        scheduler.step()


@settings(max_examples=40, deadline=None)
@given(scheduler_first=st.booleans(), name=st.sampled_from(sorted(SCHEDULERS)),
       opt_name=st.sampled_from(sorted(OPTIMIZERS)), built_inside=st.booleans(),
       before=st.integers(0, 2), steps=st.integers(1, 3), seed=st.integers(0, 2**16))
def test_a_scheduler_stepped_before_its_optimizer_is_named(scheduler_first, name, opt_name,
                                                           built_inside, before, steps, seed):
    torch.manual_seed(seed)
    model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))
    x, y = torch.randn(8, 3), torch.randn(8, 1)
    opt: torch.optim.Optimizer | None = None
    scheduler = None
    if not built_inside:
        opt = OPTIMIZERS[opt_name](model.parameters())
        scheduler = SCHEDULERS[name](opt)
        for _ in range(before):  # whole iterations before the block, in the same order
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                iteration(model, opt, scheduler, x, y, scheduler_first)
    with gradarg.watch(model) as w:
        if built_inside:
            opt = OPTIMIZERS[opt_name](model.parameters())
            scheduler = SCHEDULERS[name](opt)
        for _ in range(steps):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # the user's filter: torch's warning hidden
                iteration(model, opt, scheduler, x, y, scheduler_first)
    # torch's own verdict, from a plain run of the same iterations on a copy of the state
    truth = torch_warns(scheduler_first, name, opt_name, built_inside, before, seed)
    text = w.summary(checks=False)
    said = "ran before optimizer.step()" in text and name in text
    assert said == truth, (scheduler_first, name, opt_name, built_inside, before, text)
    if truth:
        assert not text.startswith("gradients ok"), text


def torch_warns(scheduler_first, name, opt_name, built_inside, before, seed) -> bool:
    """Whether torch warns that the scheduler stepped before the optimizer during the
    iterations that the test's block holds (a plain run, no watch, the same seed)."""
    torch.manual_seed(seed)
    model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))
    x, y = torch.randn(8, 3), torch.randn(8, 1)
    opt = OPTIMIZERS[opt_name](model.parameters())
    scheduler = SCHEDULERS[name](opt)
    if not built_inside:
        for _ in range(before):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                iteration(model, opt, scheduler, x, y, scheduler_first)
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        iteration(model, opt, scheduler, x, y, scheduler_first)
    return any(TORCH_SAYS in str(m.message) for m in got)


def test_the_first_update_uses_the_decayed_rate_and_the_text_says_so():
    torch.manual_seed(0)
    model = nn.Linear(3, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    scheduler = sched.StepLR(opt, step_size=1, gamma=0.1)
    x, y = torch.randn(8, 3), torch.randn(8, 1)
    with gradarg.watch(model) as w, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        opt.zero_grad()
        nn.functional.mse_loss(model(x), y).backward()
        g = model.bias.grad.clone()
        b = model.bias.detach().clone()
        scheduler.step()
        opt.step()
    used = float((b - model.bias.detach()) / g)  # the rate the update used, from the values
    assert abs(used - 0.01) < 1e-6
    text = w.summary(checks=False)
    assert f"first update used lr {used:.2g} where the schedule starts at 0.1" in text, text


def test_no_wrapper_is_left_behind():
    before = sched.LRScheduler.step
    with gradarg.watch(nn.Linear(2, 1)):
        assert sched.LRScheduler.step is not before
    assert sched.LRScheduler.step is before
