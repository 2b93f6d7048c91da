"""Class: an optimizer's averaging coefficient of 1 or more never forgets: SGD's or RMSprop's
``momentum >= 1`` sums every past step, SGD's ``dampening >= 1`` (with momentum) lets no
gradient in after the first step, RMSprop's ``alpha >= 1`` leaves the average of squares at 0.
Torch checks these only from below.  The watch names the optimizer, the group and the
coefficient; values below 1, and optimizers without such a coefficient, are not named.

The truth comes from torch alone, on a parameter with a constant gradient: with SGD's momentum
``m`` the third step is ``1 + m + m ** 2`` times the first (at least 3 only when ``m >= 1``);
with ``dampening == 1`` the second step is ``momentum`` times the first; with RMSprop's
``alpha >= 1`` its ``square_avg`` is still 0 after a step.  Generated: the optimizer, the
coefficients, a second param group and the seed.
"""

from __future__ import annotations

import re

import torch
from hypothesis import example, given, settings
from hypothesis import strategies as st
from torch import nn
from torch.nn import functional as F

import gradarg

COEF = st.sampled_from([0.0, 0.5, 0.9, 0.99, 1.0, 1.5])


def _steps(make, n=3):
    """Step sizes of an optimizer on a parameter whose gradient is always 1."""
    p = nn.Parameter(torch.zeros(1))
    opt, sizes = make([p]), []
    for _ in range(n):
        opt.zero_grad()
        before = p.detach().clone()
        p.sum().backward()
        opt.step()
        sizes.append(float((p.detach() - before).abs()))
    return sizes, opt, p


@settings(max_examples=30, deadline=None)
@given(kind=st.sampled_from(["SGD", "SGD", "RMSprop", "Adam"]), momentum=COEF, dampening=COEF,
       alpha=COEF, groups=st.booleans(), seed=st.integers(0, 2**16))
@example(kind="RMSprop", momentum=0.0, dampening=0.0, alpha=1.5, groups=False, seed=0)
def test_an_average_that_never_forgets_is_named(kind, momentum, dampening, alpha, groups, seed):
    torch.manual_seed(seed)
    if kind == "SGD":
        def make(params):
            return torch.optim.SGD(params, lr=0.01, momentum=momentum, dampening=dampening)
        bad = [n for n, v in (("momentum", momentum), ("dampening", dampening))
               if v >= 1 and (n == "momentum" or momentum)]
        sizes, _, _ = _steps(make)
        if not dampening:  # the truth, from torch: 1 + m + m ** 2 times the first step
            assert (sizes[2] >= 3 * sizes[0] * (1 - 1e-6)) == (momentum >= 1)
        if momentum and dampening == 1:  # no gradient enters: momentum times the first
            assert abs(sizes[1] - momentum * sizes[0]) <= 1e-6 * sizes[0]
    elif kind == "RMSprop":
        def make(params):
            return torch.optim.RMSprop(params, lr=0.01, alpha=alpha, momentum=momentum)
        bad = [n for n, v in (("alpha", alpha), ("momentum", momentum)) if v >= 1]
        _, opt, p = _steps(make, 1)
        # the truth, from torch: square_avg = (1 - alpha) g², 0 at alpha = 1, negative above
        assert bool((opt.state[p]["square_avg"] <= 0).all()) == (alpha >= 1)
    else:
        def make(params):
            return torch.optim.Adam(params, lr=0.01)
        bad = []
    model = nn.Sequential(nn.Linear(4, 6), nn.Tanh(), nn.Linear(6, 2))
    params = ([{"params": model[0].parameters()}, {"params": model[2].parameters()}]
              if groups else model.parameters())
    opt = make(params)
    x, y = torch.randn(8, 4), torch.randn(8, 2)
    with gradarg.watch(model) as w:
        opt.zero_grad()
        F.mse_loss(model(x), y).backward()
        opt.step()
    problems = " ".join(w.problems())
    named = re.search(r"(\w+) \(param group (\d+)\) has (\w+)=([\d.]+) \(observed", problems)
    assert bool(named) == bool(bad), (kind, momentum, dampening, alpha, problems)
    if named:
        assert named.group(1) == kind and named.group(2) == "0"
        assert named.group(3) == bad[0]
        assert not w.summary().startswith("gradients ok")
