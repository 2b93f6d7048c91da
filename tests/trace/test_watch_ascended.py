"""Class: a loss made of terms added and subtracted (``label_loss - lam * domain_loss``)
whose subtracted term is the only one reaching a module's parameters: a step on them raises
that term, so the module is trained to be wrong at its own task; the watch names the module
and the term instead of "ok".  Added terms, a subtracted term whose parameters an added term
also reaches (the shared trunk), and a gradient reversal layer say nothing of the kind.

The truth comes from torch alone: for each head, the inner product of the total loss's
gradient at its parameters with its own loss's gradient (``torch.autograd.grad``) is
negative exactly when the step ascends its own loss.  Generated: each term's sign and
scale, how the sign is written (``-``, ``+ (-c) *``, ``neg``), the losses, a gradient
reversal layer, the widths and the seed.
"""

from __future__ import annotations

import re

import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn
from torch.nn import functional as F

import gradarg


class Reverse(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x.view_as(x)

    @staticmethod
    def backward(ctx, g):
        return -g


class TwoHeads(nn.Module):
    def __init__(self, width, reverse):
        super().__init__()
        self.trunk = nn.Sequential(nn.Linear(6, width), nn.Tanh())
        self.first = nn.Linear(width, 3)
        self.second = nn.Linear(width, 1)
        self.reverse = reverse

    def forward(self, x):
        f = self.trunk(x)
        return self.first(f), self.second(Reverse.apply(f) if self.reverse else f)


def _losses(kinds, outs, y, d):
    a = F.cross_entropy(outs[0], y) if kinds[0] == "ce" else F.mse_loss(
        outs[0], F.one_hot(y, 3).float())
    b = (F.binary_cross_entropy_with_logits(outs[1].squeeze(1), d) if kinds[1] == "bce"
         else F.mse_loss(outs[1].squeeze(1), d))
    return a, b


def _combine(a, b, signs, scale, written):
    sa, sb = signs
    first = a if sa > 0 else -a
    if sb > 0:
        return first + scale * b
    if written == "minus":
        return first - scale * b
    if written == "plus-negative":
        return first + (-scale) * b
    return first + torch.neg(b) * scale


@settings(max_examples=30, deadline=None)
@given(signs=st.sampled_from([(1, 1), (1, -1), (1, -1), (-1, 1)]),
       scale=st.sampled_from([0.1, 1.0]), written=st.sampled_from(["minus", "plus-negative", "neg"]),
       kinds=st.tuples(st.sampled_from(["ce", "mse"]), st.sampled_from(["bce", "mse"])),
       reverse=st.booleans(), width=st.integers(3, 10), seed=st.integers(0, 2**16))
def test_a_module_that_only_a_subtracted_term_reaches_is_named(signs, scale, written, kinds,
                                                               reverse, width, seed):
    torch.manual_seed(seed)
    model = TwoHeads(width, reverse)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    x, y = torch.randn(16, 6), torch.randint(0, 3, (16,))
    d = torch.randint(0, 2, (16,)).float()
    with gradarg.watch(model) as w:
        opt.zero_grad()
        a, b = _losses(kinds, model(x), y, d)
        _combine(a, b, signs, scale, written).backward()
        opt.step()
    # the truth, from torch, at the same weights (a fresh copy of the step's start)
    torch.manual_seed(seed)
    ref = TwoHeads(width, reverse)
    a, b = _losses(kinds, ref(x), y, d)
    total = _combine(a, b, signs, scale, written)
    ascends = {}
    for name, own in (("first", a), ("second", b)):
        params = list(getattr(ref, name).parameters())
        g_total = torch.autograd.grad(total, params, retain_graph=True)
        g_own = torch.autograd.grad(own, params, retain_graph=True)
        ascends[name] = sum(float((u * v).sum()) for u, v in zip(g_total, g_own, strict=True)) < 0
    text = w.summary(checks=False)
    said = re.findall(r"module '(\w+)' gets its gradient only from a term subtracted", text)
    expected = [n for n in ("first", "second") if ascends[n]]
    assert said == expected, text
    if said:
        assert not text.startswith("gradients ok"), text
