"""Class: batch normalization in train mode over accumulated micro-batches of a few examples
normalises each micro-batch by its own statistics, so the step's gradient is not the gradient
of the batch the micro-batches make together.  The watch names it for micro-batches of at
most four examples (a problem from four micro-batches a step, a note below); GroupNorm, LayerNorm, batch normalization in eval mode, one pass, or
larger micro-batches say nothing of the kind.

The truth comes from torch: the accumulated gradient against ``torch.autograd.grad`` of the
same loss on the whole batch at once (equal exactly when the normalization does not depend
on the batch).  Generated: the normalization, its mode, the micro-batch size and count, and
the seed.
"""

from __future__ import annotations

import copy

import torch
from hypothesis import example, given, settings
from hypothesis import strategies as st
from torch import nn
from torch.nn import functional as F

import gradarg

NAMED = "ran in train mode on micro-batches of"


@settings(max_examples=25, deadline=None)
@given(norm=st.sampled_from(["bn", "bn", "group", "layer"]), train=st.booleans(),
       size=st.integers(2, 8), count=st.integers(1, 4), seed=st.integers(0, 2**16))
@example(norm="bn", train=True, size=2, count=2, seed=0)  # a note
@example(norm="bn", train=True, size=2, count=4, seed=0)  # a problem
@example(norm="bn", train=True, size=5, count=4, seed=0)  # five examples: not named
def test_batch_norm_over_small_micro_batches_is_named(norm, train, size, count, seed):
    torch.manual_seed(seed)
    layer = {"bn": nn.BatchNorm1d(8), "group": nn.GroupNorm(2, 8), "layer": nn.LayerNorm(8)}
    model = nn.Sequential(nn.Linear(5, 8), layer[norm], nn.Tanh(), nn.Linear(8, 1))
    model.train()
    model[1].train(train)
    x, y = torch.randn(size * count, 5), torch.randn(size * count, 1)
    twin = copy.deepcopy(model)  # the whole batch at once, same weights and statistics
    whole = torch.autograd.grad(F.mse_loss(twin(x), y), list(twin.parameters()))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    with gradarg.watch(model) as w:
        opt.zero_grad()
        for k in range(count):
            xb, yb = x[k * size:(k + 1) * size], y[k * size:(k + 1) * size]
            (F.mse_loss(model(xb), yb) / count).backward()
        acc = [p.grad.detach().clone() for p in model.parameters()]
        opt.step()
    same = all(torch.allclose(a, b, atol=1e-5) for a, b in zip(acc, whole, strict=True))
    batch_dependent = norm == "bn" and train and count >= 2
    assert same == (not batch_dependent)  # torch: only train-mode BN over parts differs
    text = w.summary()
    if batch_dependent and size <= 4:
        assert NAMED in text, text
        # a problem from four micro-batches a step, a note below
        assert any(NAMED in p for p in w.problems()) == (count >= 4), text
        assert f"one batch of {size * count}" in text, text
    else:
        assert NAMED not in text, text
