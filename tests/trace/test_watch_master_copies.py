"""Class: an optimizer that holds tensors which are not the model's parameters is a module
replaced after the optimizer was built only when the model's parameters never move; float32
master copies of a float16 / bfloat16 model, their values copied back after each step, move
the model and are named as master copies, not as a replaced module.

The truth comes from torch: the model's parameters compared before and after the steps, and
the dtypes of the tensors the optimizer holds against the model's.  Generated: the model's
dtype, whether the copies are copied back, a head replaced after the optimizer was built,
widths, steps and the seed.
"""

from __future__ import annotations

import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn
from torch.nn import functional as F

import gradarg

MASTERS = "float32 master copies"
REPLACED = "was replaced after the optimizer was built"


@settings(max_examples=25, deadline=None)
@given(dtype=st.sampled_from([torch.float16, torch.bfloat16, torch.float32]),
       kind=st.sampled_from(["masters", "masters", "replaced"]), copy_back=st.booleans(),
       width=st.sampled_from([8, 16]), steps=st.integers(2, 3), seed=st.integers(0, 2**16))
def test_master_copies_are_not_a_replaced_module(dtype, kind, copy_back, width, steps, seed):
    torch.manual_seed(seed)
    model = nn.Sequential(nn.Linear(6, width), nn.Tanh(), nn.Linear(width, 3)).to(dtype)
    if kind == "masters":
        held = [p.detach().float().clone().requires_grad_(True) for p in model.parameters()]
    else:
        held = list(model.parameters())
    opt = torch.optim.SGD(held, lr=0.5)
    if kind == "replaced":
        model[2] = nn.Linear(width, 3).to(dtype)  # after the optimizer was built
    before = [p.detach().clone() for p in model.parameters()]
    x, y = torch.randn(8, 6).to(dtype), torch.randint(0, 3, (8,))
    with gradarg.watch(model) as w:
        for _ in range(steps):
            model.zero_grad()
            F.cross_entropy(model(x).float(), y).backward()
            if kind == "masters":
                for p, m in zip(model.parameters(), held, strict=True):
                    m.grad = p.grad.detach().float()
            opt.step()
            if kind == "masters" and copy_back:
                with torch.no_grad():
                    for p, m in zip(model.parameters(), held, strict=True):
                        p.copy_(m)
    # the truth: did the model's parameters move, and are the held tensors wider copies
    moved = any(not torch.equal(b, p.detach()) for b, p in zip(before, model.parameters(),
                                                               strict=True))
    wider = kind == "masters" and dtype != torch.float32 and all(
        h.dtype == torch.float32 for h in held)
    text = w.summary()
    if wider and moved:
        assert MASTERS in text, text
        assert REPLACED not in text, text
    else:
        assert MASTERS not in text, text
    if kind == "replaced":
        assert not any(not torch.equal(b, p.detach())
                       for b, p in zip(before[2:], list(model.parameters())[2:], strict=True))
        assert REPLACED in text or "was replaced" in text, text
