"""Class: a part of the model run under ``torch.no_grad()`` whose parameters still require
grad gets no gradient; that is a problem when an optimizer that steps holds them (they were
meant to train) and a note when none does (a part kept fixed, as in temperature scaling of a
trained classifier): the summary then keeps its "ok" for the rest, naming them.

The truth comes from torch: which parameters have ``.grad`` None after the step, and which
the optimizer's ``param_groups`` hold.  Generated: the fixed part under ``no_grad`` or not,
whether the optimizer holds it, the optimizer, the seed.
"""

from __future__ import annotations

import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn

import gradarg


class Scaled(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(5, 8), nn.Tanh(), nn.Linear(8, 3))
        self.temperature = nn.Parameter(torch.ones(1) * 1.5)

    def forward(self, x, fixed):
        if fixed:
            with torch.no_grad():
                logits = self.body(x)
        else:
            logits = self.body(x)
        return logits / self.temperature


@settings(max_examples=20, deadline=None)
@given(fixed=st.booleans(), holds_body=st.booleans(),
       kind=st.sampled_from(["SGD", "Adam", "LBFGS"]), seed=st.integers(0, 2**16))
def test_a_part_kept_fixed_is_a_note_only_when_no_optimizer_holds_it(fixed, holds_body, kind,
                                                                     seed):
    torch.manual_seed(seed)
    model = Scaled()
    x, y = torch.randn(12, 5), torch.randint(0, 3, (12,))
    params = list(model.parameters()) if holds_body else [model.temperature]
    opt = (torch.optim.LBFGS(params, lr=0.01, max_iter=3) if kind == "LBFGS" else
           getattr(torch.optim, kind)(params, lr=0.01))

    def closure():
        opt.zero_grad()
        loss = nn.functional.cross_entropy(model(x, fixed), y)
        loss.backward()
        return loss

    with gradarg.watch(model) as w:
        if kind == "LBFGS":
            opt.step(closure)
        else:
            closure()
            opt.step()
    held = {id(p) for g in opt.param_groups for p in g["params"]}
    body = list(model.body.parameters())
    no_grad = [p.grad is None for p in body]
    assert all(no_grad) == fixed  # the truth, from torch
    problems = w.problems()
    text = w.summary()
    if fixed and not any(id(p) in held for p in body):
        assert problems == [], problems
        assert text.startswith("gradients ok: every parameter but body."), text
        assert "no optimizer whose step ran holds them" in text
    elif fixed:
        assert any("no gradient for 4 parameter(s)" in p for p in problems), problems
    elif holds_body:
        assert problems == [], problems
        assert text.startswith("gradients ok: every parameter got"), text
    else:  # trained by backward, applied by no optimizer: a problem, as before
        assert any("got a gradient in this step but no optimizer" in p for p in problems)
