"""Class: an optimizer step whose ``.grad`` sums the gradients of losses computed with the
model in eval mode and in train mode: a validation loss backpropagated (no step, no
``zero_grad``) into the next training step.  The watch names it; validation under
``torch.no_grad()``, ``zero_grad`` after validation, and accumulation over training
micro-batches are not named.

The truth comes from torch alone: the update the step made against ``-lr`` times the training
loss's gradient (``torch.autograd.grad`` on a copy at the same weights).  Generated: how
validation is done, the widths, dropout or not, and the seed.
"""

from __future__ import annotations

import copy

import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn
from torch.nn import functional as F

import gradarg

HOW = ["backward", "no_grad", "zero_grad_after", "accumulate"]
LR = 0.1


@settings(max_examples=25, deadline=None)
@given(how=st.sampled_from(HOW), width=st.integers(3, 8), seed=st.integers(0, 2**16))
def test_a_validation_gradient_in_a_training_step_is_named(how, width, seed):
    torch.manual_seed(seed)
    model = nn.Sequential(nn.Linear(5, width), nn.Tanh(), nn.Linear(width, 3))
    opt = torch.optim.SGD(model.parameters(), lr=LR)
    xv, yv = torch.randn(8, 5), torch.randint(0, 3, (8,))
    xt, yt = torch.randn(8, 5), torch.randint(0, 3, (8,))
    ref = copy.deepcopy(model)
    g_train = torch.autograd.grad(F.cross_entropy(ref(xt), yt), list(ref.parameters()))
    before = [p.detach().clone() for p in model.parameters()]
    with gradarg.watch(model) as w:
        if how == "accumulate":  # two training micro-batches, no validation
            for x, y in ((xv, yv), (xt, yt)):
                F.cross_entropy(model(x), y).backward()
        else:
            model.eval()
            if how == "no_grad":
                with torch.no_grad():
                    F.cross_entropy(model(xv), yv)
            else:
                F.cross_entropy(model(xv), yv).backward()
                if how == "zero_grad_after":
                    opt.zero_grad()
            model.train()
            F.cross_entropy(model(xt), yt).backward()
        opt.step()
    # the truth, from torch: the step moved by more than the training gradient alone
    moved = [p.detach() - b for p, b in zip(model.parameters(), before, strict=True)]
    only_train = all(torch.allclose(m, -LR * g, atol=1e-6)
                     for m, g in zip(moved, g_train, strict=True))
    assert only_train == (how in ("no_grad", "zero_grad_after"))
    text = w.summary(checks=False)
    named = "eval mode and in train mode" in text
    assert named == (how == "backward"), text
