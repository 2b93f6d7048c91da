"""Class: a regression or binary loss whose target is a second output of the model made the
same way as its input (a Pi-model's consistency term between two perturbed passes) is a
symmetric term: both sides are meant to get its gradient, so the watch states it as a note.
A target made differently from the input that still carries gradient into the model (a
bootstrapped ``r + gamma * max Q(s')`` not detached, an output scaled or passed through another
head) is a problem: the parameters also get the target's gradient.

The truth comes from torch alone: whether the target carries gradient is whether the
parameters' gradient changes when the target is detached (``torch.autograd.grad`` both ways);
whether it is made the same way is the generated construction.  Generated: the loss, the output
activation, how the target is made, and the seed.
"""

from __future__ import annotations

import re

import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn
from torch.nn import functional as F

import gradarg

LOSSES = {"mse": F.mse_loss, "smooth_l1": F.smooth_l1_loss, "huber": F.huber_loss,
          "bce": F.binary_cross_entropy}
HEADS = {"softmax": lambda t: F.softmax(t, dim=1), "sigmoid": torch.sigmoid,
         "none": lambda t: t}


def _sides(model, head, how, x, x2):
    a = HEADS[head](model(x))
    if how == "second-pass":  # the same function on a perturbed input
        b = HEADS[head](model(x2))
    elif how == "bootstrapped":  # r + gamma * max over the other pass, broadcast
        b = 0.1 + 0.9 * model(x2).max(dim=1, keepdim=True).values.expand_as(a)
        b = torch.sigmoid(b) if head != "none" else b
    elif how == "scaled":
        b = HEADS[head](0.5 * model(x2))
    else:  # detached
        b = HEADS[head](model(x2)).detach()
    return a, b


@settings(max_examples=30, deadline=None)
@given(loss=st.sampled_from(sorted(LOSSES)), head=st.sampled_from(sorted(HEADS)),
       how=st.sampled_from(["second-pass", "second-pass", "bootstrapped", "scaled", "detached"]),
       seed=st.integers(0, 2**16))
def test_a_target_made_the_same_way_is_symmetric(loss, head, how, seed):
    if loss == "bce" and head == "none":
        head = "sigmoid"  # binary_cross_entropy needs probabilities on both sides
    torch.manual_seed(seed)
    model = nn.Sequential(nn.Linear(5, 10), nn.Tanh(), nn.Dropout(0.2), nn.Linear(10, 4)).train()
    x = torch.randn(12, 5)
    x2 = x + 0.1 * torch.randn_like(x)
    params = list(model.parameters())

    # the truth: does the target carry gradient into the model?
    torch.manual_seed(seed + 1)
    a, b = _sides(model, head, how, x, x2)
    live = torch.autograd.grad(LOSSES[loss](a, b), params, retain_graph=True)
    fixed = torch.autograd.grad(LOSSES[loss](a, b.detach()), params)
    carries = any(not torch.allclose(g, h, atol=0, rtol=0) for g, h in zip(live, fixed,
                                                                          strict=True))
    same_way = how == "second-pass"

    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    with gradarg.watch(model) as w:
        opt.zero_grad()
        torch.manual_seed(seed + 1)
        a, b = _sides(model, head, how, x, x2)
        LOSSES[loss](a, b).backward()
        opt.step()
    problems = " ".join(w.problems())
    s = w.summary()
    problem = re.search(r"the target of \w+ \(its second argument\) carries gradient", problems)
    note = re.search(r"compares two outputs made the same way", s)
    assert bool(problem) == (carries and not same_way), (loss, head, how, problems)
    assert bool(note) == (carries and same_way), (loss, head, how, s)
