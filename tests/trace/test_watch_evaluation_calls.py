"""Class: a validation forward under ``torch.no_grad()`` (or ``inference_mode``) after a
training step, inside the same watched block, is not a new step: the summary describes the
last training step, as it does without the validation, never "no backward pass reached the
model".  A forward under ``no_grad`` before any backward (a training forward that cannot
train) is still reported.

The truth comes from torch: a twin model trained by the same loop without the validation
calls ends with the same parameters and gradients (checked), so the two summaries must say
the same.  Generated: steps, validation calls after each step, the grad mode they run in,
model.eval() around them, and the seed.
"""

from __future__ import annotations

import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn
from torch.nn import functional as F

import gradarg


def _run(validate, steps, calls, mode, evaluate, seed):
    torch.manual_seed(seed)
    model = nn.Sequential(nn.Linear(5, 16), nn.Tanh(), nn.Linear(16, 2))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    g = torch.Generator().manual_seed(seed)
    x, y = torch.randn(12, 5, generator=g), torch.randn(12, 2, generator=g)
    xv = torch.randn(6, 5, generator=g)
    with gradarg.watch(model) as w:
        for _ in range(steps):
            opt.zero_grad()
            F.mse_loss(model(x), y).backward()
            opt.step()
            if validate:
                if evaluate:
                    model.eval()
                ctx = torch.no_grad() if mode == "no_grad" else torch.inference_mode()
                with ctx:
                    for _ in range(calls):
                        model(xv)
                model.train()
    grads = [p.grad.detach().clone() for p in model.parameters()]
    return w.summary(), [p.detach().clone() for p in model.parameters()], grads


@settings(max_examples=20, deadline=None)
@given(steps=st.integers(1, 3), calls=st.integers(1, 2),
       mode=st.sampled_from(["no_grad", "inference_mode"]), evaluate=st.booleans(),
       seed=st.integers(0, 2**16))
def test_validation_calls_do_not_replace_the_step(steps, calls, mode, evaluate, seed):
    with_val, params, grads = _run(True, steps, calls, mode, evaluate, seed)
    plain, params0, grads0 = _run(False, steps, calls, mode, evaluate, seed)
    for a, b in zip(params + grads, params0 + grads0, strict=True):
        assert torch.equal(a, b)  # the validation changed nothing the training reads
    assert "no backward pass reached the model" not in with_val, with_val
    assert with_val.split(";")[0] == plain.split(";")[0], (with_val, plain)


def test_a_no_grad_forward_before_any_backward_is_still_reported():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(5, 4), nn.Tanh(), nn.Linear(4, 1))
    with gradarg.watch(model) as w, torch.no_grad():
        model(torch.randn(3, 5))
    text = w.summary()
    assert "no backward pass reached the model" in text
    assert "it ran with gradients disabled" in text, text  # the call itself is recorded
