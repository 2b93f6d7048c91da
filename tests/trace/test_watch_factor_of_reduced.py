"""Class: a modulating factor (focal loss's ``(1 - p_t) ** gamma``, ``p_t = exp(-loss)``) made
from a loss already reduced to one number weighs every element alike: the loss is a function of
the reduced loss alone and its gradient is that loss's times a positive constant.  The watch
names ``exp(-L)`` of a loss reduced (mean or sum) over several elements, with the loss and the
element count; the factor computed per element (``reduction='none'``, then a mean) and the
plain loss are not named.

The truth comes from torch alone: for the reduced form, the parameters' gradient is parallel
to the plain loss's (cosine 1) and a positive multiple of it.  Generated: the loss function,
the reduction, the form, gamma, alpha and the seed.
"""

from __future__ import annotations

import re

import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn
from torch.nn import functional as F

import gradarg


def _loss(kind, out, y, reduction):
    if kind == "bce":
        return F.binary_cross_entropy_with_logits(out, y, reduction=reduction)
    if kind == "ce":
        return F.cross_entropy(out, y.argmax(1), reduction=reduction)
    return F.mse_loss(out, y, reduction=reduction)


@settings(max_examples=30, deadline=None)
@given(kind=st.sampled_from(["bce", "ce", "mse"]), reduction=st.sampled_from(["mean", "sum"]),
       form=st.sampled_from(["reduced", "reduced", "per-element", "plain"]),
       gamma=st.integers(1, 3), alpha=st.sampled_from([0.25, 1.0]), seed=st.integers(0, 2**16))
def test_a_factor_made_from_a_reduced_loss_is_named(kind, reduction, form, gamma, alpha, seed):
    torch.manual_seed(seed)
    model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 3))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = torch.randn(16, 4), (torch.rand(16, 3) < 0.3).float()
    y[:, 0] = torch.where(y.sum(1) == 0, 1.0, y[:, 0])  # a positive label in every row

    def loss_of(out):
        if form == "plain":
            return _loss(kind, out, y, reduction)
        if form == "per-element":
            per = _loss(kind, out, y, "none")
            return (alpha * (1 - torch.exp(-per)) ** gamma * per).mean()
        total = _loss(kind, out, y, reduction)
        return alpha * (1 - torch.exp(-total)) ** gamma * total

    params = list(model.parameters())
    if form == "reduced":  # the truth: a positive multiple of the plain loss's gradient
        g = torch.cat([t.flatten() for t in torch.autograd.grad(loss_of(model(x)), params)])
        plain = _loss(kind, model(x), y, reduction)
        h = torch.cat([t.flatten() for t in torch.autograd.grad(plain, params)])
        assert float(F.cosine_similarity(g, h, dim=0)) > 1 - 1e-5
    with gradarg.watch(model) as w:
        opt.zero_grad()
        loss = loss_of(model(x))
        loss.backward()
        opt.step()
    problems = " ".join(w.problems())
    named = re.search(r"the loss takes exp\(-L\) = \S+ of L, (.+?) already reduced to one number "
                      r"over (\d+) elements \(reduction='(\w+)'", problems)
    assert bool(named) == (form == "reduced"), (form, problems)
    if named:
        assert named.group(1).startswith({"bce": "binary_cross_entropy_with_logits",
                                          "ce": "nll_loss", "mse": "mse_loss"}[kind])
        assert int(named.group(2)) == (16 if kind == "ce" else 16 * 3)  # terms reduced
        assert named.group(3) == reduction
        assert not w.summary().startswith("gradients ok")
