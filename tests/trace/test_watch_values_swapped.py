"""Class: a parameter's values replaced between two optimizer steps by an assignment to
``param.data`` (an EMA's ``apply_shadow()`` without ``restore()``): the next step starts from
other values than the last one left, and that update is thrown away.  The summary names
exactly the parameters whose storage was replaced with other values; a swap undone before the
next step (``restore()``), an assignment of equal values, an edit in place and a step with
nothing in between are never named.

The truth comes from torch alone: ``data_ptr()`` and the values after one step and before the
next.  Generated: per parameter what happens between the steps, the optimizer, the number of
steps.
"""

from __future__ import annotations

import re

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn

import gradarg

BETWEEN = ("nothing", "swap", "swap and restore", "equal copy", "in place")


@settings(max_examples=30, deadline=None)
@given(acts=st.lists(st.sampled_from(BETWEEN), min_size=4, max_size=4),
       optimizer=st.sampled_from(["SGD", "Adam"]), steps=st.integers(1, 3),
       seed=st.integers(0, 2**16))
def test_values_replaced_between_steps_are_named_exactly(acts, optimizer, steps, seed):
    torch.manual_seed(seed)
    model = nn.Sequential(nn.Linear(5, 7), nn.Tanh(), nn.Linear(7, 1))
    opt = getattr(torch.optim, optimizer)(model.parameters(), lr=0.05)
    params = dict(model.named_parameters())
    x, y = torch.randn(9, 5), torch.randn(9, 1)
    replaced = set()
    with gradarg.watch(model) as w:
        for k in range(steps):
            if k:  # between step k and step k + 1
                left = {n: (p.data_ptr(), p.detach().clone()) for n, p in params.items()}
                for p, act in zip(params.values(), acts, strict=True):
                    kept = p.data
                    if act in ("swap", "swap and restore"):
                        p.data = torch.randn_like(p) + 5.0  # other values, new storage
                    elif act == "equal copy":
                        p.data = p.data.clone()
                    elif act == "in place":
                        p.data.mul_(0.5)
                    if act == "swap and restore":
                        p.data = kept
                for n, p in params.items():  # torch's own view of what happened
                    ptr, values = left[n]
                    if p.data_ptr() != ptr and not torch.equal(p.detach(), values):
                        replaced.add(n)
            opt.zero_grad()
            nn.functional.mse_loss(model(x), y).backward()
            opt.step()
        summary = w.summary(checks=True)
    said = re.search(r"replaced between two \w+ steps, outside the optimizer: ([^(]*) \(",
                     summary)
    named = set() if said is None else {s.strip() for s in said.group(1).split(",")}
    if replaced:
        shown = set(sorted(replaced, key=list(params).index)[:3])
        assert named == shown | ({"..."} if len(replaced) > 3 else set()), (summary, replaced)
    else:
        assert said is None, summary
    checked = summary.split("[checked: ")[-1].split("; not checked")[0]
    assert "values between steps" in checked, summary  # with one step: nothing in between


@pytest.mark.parametrize("restore", [False, True])
def test_an_ema_swap_left_in_place_is_said_and_a_restored_one_is_not(restore):
    torch.manual_seed(0)
    model = nn.Linear(4, 2)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    shadow = {n: p.detach().clone() for n, p in model.named_parameters()}
    with gradarg.watch(model) as w:
        for k in range(2):
            if k:
                backup = {}
                for n, p in model.named_parameters():  # apply_shadow()
                    backup[n], p.data = p.data, shadow[n]
                if restore:
                    for n, p in model.named_parameters():
                        p.data = backup[n]
            opt.zero_grad()
            model(torch.randn(3, 4)).pow(2).mean().backward()
            opt.step()
    text = w.summary(checks=False)
    assert ("replaced between two SGD steps" in text) == (not restore), text
