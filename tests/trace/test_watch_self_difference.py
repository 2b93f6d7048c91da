"""Class: a loss term that subtracts a tensor from itself, or divides it by itself (an
anchor kept as the parameter itself, ``p - anchor`` with ``anchor is p``), is named, with the
parameters it takes twice; a copy of the value (``p.detach().clone()``), ``x - x.detach()``
(zero value, nonzero gradient) or ``x - 2 * x`` is not.

The truth comes from torch alone: the term's value after a step and its gradient with respect
to the parameters (``torch.autograd.grad`` of the term alone).  Generated: how the reference
is kept, whether the term is on a parameter or on an intermediate output, the widths, how
many steps the model trained before.
"""

from __future__ import annotations

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn
from torch.nn import functional as F

import gradarg

SAID = ("subtracts a tensor from itself", "divides a tensor by itself")
TWICE = {"itself", "itself_div", "hidden_itself"}  # forms that take one node twice


def term(form: str, model: nn.Module, ref: dict, x: torch.Tensor) -> torch.Tensor:
    if form.startswith("hidden"):
        h = model[0](x)
        if form == "hidden_itself":
            return (h - h).pow(2).mean()
        return (h - h.detach()).pow(2).mean()  # value 0, gradient 0 too, but not one node
    total = torch.zeros(())
    for n, p in model.named_parameters():
        if form == "itself_div":
            total = total + (p / ref[n]).sum()
        elif form == "alpha":
            total = total + torch.sub(p, ref[n], alpha=2).pow(2).sum()
        else:
            total = total + (p - ref[n]).pow(2).sum()
    return total


@pytest.mark.parametrize("form", ["itself", "itself_div", "clone", "alpha", "hidden_itself",
                                  "hidden_detached"])
@settings(max_examples=6, deadline=None)
@given(width=st.integers(2, 8), before=st.integers(0, 2), seed=st.integers(0, 2**16))
def test_a_term_that_takes_one_tensor_twice_is_named(form, width, before, seed):
    torch.manual_seed(seed)
    model = nn.Sequential(nn.Linear(4, width), nn.Tanh(), nn.Linear(width, 2))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = torch.randn(16, 4), torch.randint(0, 2, (16,))
    params = dict(model.named_parameters())
    ref = (params if form in ("itself", "itself_div", "alpha")
           else {n: p.detach().clone() for n, p in params.items()})
    for _ in range(before):
        opt.zero_grad()
        F.cross_entropy(model(x), y).backward()
        opt.step()
    with gradarg.watch(model) as w:
        opt.zero_grad()
        extra = term(form, model, ref, x)
        (F.cross_entropy(model(x), y) + 0.1 * extra).backward()
        opt.step()
    # the truth, from torch: a term of one tensor taken twice is constant, gradient zero
    extra = term(form, model, ref, x)
    grads = torch.autograd.grad(extra, list(model.parameters()), allow_unused=True)
    flat = all(g is None or bool((g == 0).all()) for g in grads)
    if form in TWICE:
        assert flat
    text = w.summary(checks=False)
    named = any(s in text for s in SAID)
    assert named == (form in TWICE), (form, text)
    if named and not form.startswith("hidden"):
        assert "0.weight" in text and "store p.detach().clone()" in text
        assert not text.startswith("gradients ok")
