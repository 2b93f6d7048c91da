"""Class: batch normalization whose affine parameters are frozen (``requires_grad=False``) but
that runs in train mode normalises each batch with that batch's statistics, not the running
statistics it holds; with ``momentum=0`` it never updates them either, so the step trains on
statistics ``eval()`` does not use (a problem), else it updates them (a note).  In eval mode,
or with trainable affine parameters, nothing of the kind is said.

The truth comes from torch: the model's output in the step against the same model with that
module in eval mode (they differ exactly when batch statistics were used), and the running
statistics before and after the step.  Generated: the module (1-d or 2-d), frozen or not, its
mode, its momentum, and the seed.
"""

from __future__ import annotations

import copy

import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn
from torch.nn import functional as F

import gradarg

PROBLEM = "which momentum=0 never updates"
NOTE = "and updates them (momentum="


@settings(max_examples=25, deadline=None)
@given(dims=st.sampled_from([1, 2]), frozen=st.booleans(), train=st.booleans(),
       momentum=st.sampled_from([0.0, 0.1, None]), seed=st.integers(0, 2**16))
def test_frozen_batch_norm_in_train_mode_is_named(dims, frozen, train, momentum, seed):
    torch.manual_seed(seed)
    if dims == 1:
        model = nn.Sequential(nn.Linear(6, 8), nn.BatchNorm1d(8, momentum=momentum), nn.Tanh(),
                              nn.Linear(8, 3))
        x = 2 * torch.randn(16, 6) + 1
    else:
        model = nn.Sequential(nn.Conv2d(2, 4, 3), nn.BatchNorm2d(4, momentum=momentum),
                              nn.Tanh(), nn.Flatten(), nn.Linear(4 * 4 * 4, 3))
        x = 2 * torch.randn(8, 2, 6, 6) + 1
    bn = model[1]
    for p in bn.parameters():
        p.requires_grad_(not frozen)
    model.train()
    bn.train(train)
    y = torch.randint(0, 3, (x.shape[0],))
    opt = torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=0.1)
    before = bn.running_mean.clone()
    twin = copy.deepcopy(model)
    twin[1].eval()  # the same weights, normalising with the running statistics
    with torch.no_grad():
        by_running = twin(x)
    with gradarg.watch(model) as w:
        opt.zero_grad()
        out = model(x)
        F.cross_entropy(out, y).backward()
        opt.step()
    # the truth: batch statistics used (the output differs from eval's), statistics updated
    batch_stats = not torch.allclose(out.detach(), by_running, atol=1e-6)
    assert batch_stats == train
    updated = not torch.equal(before, bn.running_mean)
    assert updated == (train and momentum != 0.0)
    text = w.summary()
    if frozen and batch_stats and not updated:
        assert PROBLEM in text and not text.startswith("gradients ok"), text
    elif frozen and batch_stats:
        assert NOTE in text and PROBLEM not in text, text
    else:
        assert PROBLEM not in text and NOTE not in text, text
