"""Class: entries of a parameter whose gradient a hook of the user's set to zero (a pruning
mask) that the optimizer step moved all the same (momentum, Adam's running averages, weight
decay) are named instead of "ok"; when the step leaves them as they were, nothing is said.

The truth comes from torch alone: the test's own mask, ``.grad`` at those entries (zero after
the hook) and the parameter before and after the step.  Generated: the optimizer, its options,
the steps run before the mask (which build the optimizer's state), whether the masked weights
are zeroed (pruned) first, the share of entries masked, where the hook is registered.
"""

from __future__ import annotations

import copy

import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn

import gradarg

OPTIMIZERS = {
    "SGD": lambda p: torch.optim.SGD(p, lr=0.05),
    "SGD momentum": lambda p: torch.optim.SGD(p, lr=0.05, momentum=0.9),
    "SGD weight decay": lambda p: torch.optim.SGD(p, lr=0.05, weight_decay=0.1),
    "Adam": lambda p: torch.optim.Adam(p, lr=0.01),
    "AdamW": lambda p: torch.optim.AdamW(p, lr=0.01, weight_decay=0.1),
}


@settings(max_examples=40, deadline=None)
@given(opt_name=st.sampled_from(sorted(OPTIMIZERS)), before=st.integers(0, 2),
       prune=st.booleans(), share=st.sampled_from([0.25, 0.5, 0.75]),
       inside=st.booleans(), seed=st.integers(0, 2**16))
def test_masked_entries_a_step_moved_are_named(opt_name, before, prune, share, inside, seed):
    torch.manual_seed(seed)
    model = nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Linear(8, 1))
    opt = OPTIMIZERS[opt_name](model.parameters())
    x, y = torch.randn(16, 6), torch.randn(16, 1)

    def step():
        opt.zero_grad()
        nn.functional.mse_loss(model(x), y).backward()
        opt.step()

    for _ in range(before):
        step()
    weight = model[0].weight
    k = int(weight.numel() * share)
    mask = torch.ones(weight.numel())
    mask[torch.randperm(weight.numel())[:k]] = 0
    mask = mask.view_as(weight)
    if prune:
        with torch.no_grad():
            weight.mul_(mask)
    twin = copy.deepcopy(model)  # the gradient before any hook, from torch on a twin
    (raw,) = torch.autograd.grad(nn.functional.mse_loss(twin(x), y), twin[0].weight)
    if not inside:
        weight.register_hook(lambda g: g * mask)
    with gradarg.watch(model) as w:
        if inside:
            weight.register_hook(lambda g: g * mask)
        opt.zero_grad()
        nn.functional.mse_loss(model(x), y).backward()
        grad = weight.grad.clone()
        was = weight.detach().clone()
        opt.step()
    off = (mask == 0) & (raw != 0)  # what the hook set to zero
    assert bool((grad[mask == 0] == 0).all())  # the hook zeroed them (torch's own .grad)
    zeroed_by_hook = int(off.sum())
    moved = int((weight.detach()[off] != was[off]).sum())
    text = w.summary(checks=False)
    said = f"a hook on 0.weight set {zeroed_by_hook} entries of its gradient to zero" in text
    assert said == bool(moved), (opt_name, before, prune, moved, text)
    if moved:
        assert f"still moved {moved} of them" in text and not text.startswith("gradients ok"), text
