"""Class: an optimizer that also steps tensors outside the model is a problem only when those
tensors get no gradient.  A criterion's own parameters (proxies of a proxy loss, class centres,
a learned temperature) are in the optimizer and in the loss: they get a ``.grad`` and the step
trains them, which the watch states as a note, not a problem.  A tensor the loss never uses
(a replaced module's, a forgotten one) has no ``.grad`` and never moves: named as a problem.

The truth comes from torch alone: a twin of the setup is run without the watch and the extra
tensor is compared before and after the optimizer's step.  Generated: how the loss uses the
extra tensor, its parameter group, where ``zero_grad()`` runs, the number of steps, the seed.
"""

from __future__ import annotations

import re

import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn
from torch.nn import functional as F

import gradarg


def _run(use, own_group, zero_after, steps, seed, watch):
    torch.manual_seed(seed)
    model = nn.Sequential(nn.Linear(6, 12), nn.Tanh(), nn.Linear(12, 5))
    extra = nn.Parameter(torch.randn(3, 5) if use != "temperature" else torch.tensor(0.5))
    groups = [{"params": model.parameters()}]
    if own_group:
        groups.append({"params": [extra], "lr": 0.5})
    else:
        groups[0]["params"] = [*model.parameters(), extra]
    opt = torch.optim.SGD(groups, lr=0.05)
    x, y = torch.randn(24, 6), torch.randint(0, 3, (24,))
    before = extra.detach().clone()

    def step():
        if not zero_after:
            opt.zero_grad()
        z = F.normalize(model(x), dim=1)
        if use == "proxies":  # logits against the proxies (a proxy-NCA style loss)
            loss = F.cross_entropy(z @ F.normalize(extra, dim=1).T * 8, y)
        elif use == "temperature":
            loss = F.cross_entropy(z[:, :3] / extra.exp(), y)
        else:  # the extra tensor is never used
            loss = F.cross_entropy(z[:, :3] * 8, y)
        loss.backward()
        opt.step()
        if zero_after:
            opt.zero_grad()

    if watch:
        with gradarg.watch(model) as w:
            for _ in range(steps):
                step()
        return w, extra
    for _ in range(steps):
        step()
    return None, not torch.equal(before, extra.detach())


@settings(max_examples=25, deadline=None)
@given(use=st.sampled_from(["proxies", "temperature", "unused"]), own_group=st.booleans(),
       zero_after=st.booleans(), steps=st.integers(1, 2), seed=st.integers(0, 2**16))
def test_tensors_outside_the_model_are_a_problem_only_without_gradient(use, own_group,
                                                                       zero_after, steps, seed):
    _, trained = _run(use, own_group, zero_after, steps, seed, watch=False)  # the truth
    w, extra = _run(use, own_group, zero_after, steps, seed, watch=True)
    problems = " ".join(w.problems())
    s = w.summary()
    named = re.search(r"not parameters of the model", problems)
    assert bool(named) == (not trained), (use, own_group, zero_after, problems)
    if trained:
        assert s.startswith("gradients ok"), s
        shape = str(tuple(extra.shape))
        assert re.search(r"also steps 1 tensor\(s\) that are not parameters of the model "
                         rf"\(shapes {re.escape(shape)}\)", s), s
    else:
        assert re.search(r"had no \.grad", problems), problems
