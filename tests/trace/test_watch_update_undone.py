"""Class: an edit in place after ``optimizer.step()`` that puts the weights back where they were
before the step (rounding onto a quantisation grid coarser than the update, a copy of saved
weights) undoes every update: the model never moves while each step looks applied.  The
watch names the parameters put back and how many entries; an edit that keeps the update
(fine rounding, a clamp that does not bind, none) says nothing of the kind.

The truth comes from the tensors alone: each parameter before the step, after it and after
the edit, compared entry by entry (the tensors here are small enough that the watch's sample
reads every entry).  Generated: the edit, the learning rate, the optimizer and the seed.
"""

from __future__ import annotations

import re

import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn

import gradarg


@settings(max_examples=25, deadline=None)
@given(edit=st.sampled_from(["coarse-grid", "copy-back", "fine-grid", "clamp-loose", "none"]),
       lr=st.sampled_from([1e-4, 1e-3]), adam=st.booleans(), seed=st.integers(0, 2**16))
def test_an_update_put_back_in_place_is_named(edit, lr, adam, seed):
    torch.manual_seed(seed)
    model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 2))
    with torch.no_grad():  # start on the coarse grid, as quantised weights would
        for p in model.parameters():
            p.copy_(torch.round(p / 0.125) * 0.125)
    params = list(model.parameters())
    opt = (torch.optim.Adam if adam else torch.optim.SGD)(params, lr=lr)
    x, y = torch.randn(16, 3), torch.randn(16, 2)
    history = []  # (before the step, after it, after the edit) per step
    with gradarg.watch(model) as w:
        for _ in range(3):
            before = [p.detach().clone() for p in params]
            opt.zero_grad()
            nn.functional.mse_loss(model(x), y).backward()
            opt.step()
            after = [p.detach().clone() for p in params]
            with torch.no_grad():
                for p, b in zip(params, before, strict=True):
                    if edit == "coarse-grid":
                        p.copy_(torch.round(p / 0.125) * 0.125)
                    elif edit == "copy-back":
                        p.copy_(b)
                    elif edit == "fine-grid":
                        p.copy_(torch.round(p / 1e-7) * 1e-7)
                    elif edit == "clamp-loose":
                        p.clamp_(-100, 100)
            history.append((before, after, [p.detach().clone() for p in params]))
    # the truth: after the last edit that preceded a step, which parameters are back
    before, after, edited = history[-2]
    back = []
    for name, b, a, e in zip([n for n, _ in model.named_parameters()], before, after, edited,
                             strict=True):
        moved = b != a
        if int(moved.sum()) and int((moved & (e == b)).sum()) * 2 > int(moved.sum()):
            back.append(name)
    text = " ".join(w.problems())
    said = re.search(r"was undone in place before the next step for (\d+) parameter", text)
    assert bool(said) == bool(back), (text, back)
    if said:
        assert int(said.group(1)) == len(back)
