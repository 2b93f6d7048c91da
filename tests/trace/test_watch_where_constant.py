"""Class: a loss recorded as ``where(c1, a, 0) + where(c2, b, 0)`` whose conditions leave
some entries on the constant branch of both (``nn.CosineEmbeddingLoss`` given labels 0 and 1
where it expects 1 and -1): those entries have loss exactly 0 and zero gradient whatever the
model outputs, and the watch says how many (not "ok").  Labels in {1, -1},
``hinge_embedding_loss`` (whose conditions cover every entry) and a single masked ``where``
(padding) say nothing of the kind.

The truth comes from torch alone: the loss's gradient with respect to both embeddings, by
``torch.autograd.grad``, is exactly zero on every row whose label is neither 1 nor -1, and the
number of those rows is the number the watch must state.  Generated: the labels' coding
(0/1, -1/1, a mix with some 0), the margin, the loss, the widths and the seed.
"""

from __future__ import annotations

import re

import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn
from torch.nn import functional as F

import gradarg

PAIRS = 24


def _labels(coding, g):
    bits = torch.randint(0, 2, (PAIRS,), generator=g).float()
    if coding == "0/1":
        return bits
    if coding == "-1/1":
        return 2 * bits - 1
    signs = 2 * bits - 1  # -1/1 with a few 0 among them
    signs[torch.randperm(PAIRS, generator=g)[:3]] = 0
    return signs


def _loss(kind, margin):
    def fn(z1, z2, y):
        if kind == "cosine":
            return F.cosine_embedding_loss(z1, z2, y, margin=margin)
        if kind == "hinge":
            d = (z1 - z2).norm(dim=1)
            return F.hinge_embedding_loss(d, y, margin=1.0 + margin)
        # a padding mask, one where: legitimately constant on the masked entries
        d = (z1 - z2).pow(2).sum(1)
        return torch.where(y != 0, d, torch.zeros_like(d)).mean()
    return fn


@settings(max_examples=30, deadline=None)
@given(coding=st.sampled_from(["0/1", "-1/1", "mixed"]), margin=st.sampled_from([0.0, 0.3]),
       kind=st.sampled_from(["cosine", "cosine", "hinge", "masked"]), width=st.integers(4, 12),
       seed=st.integers(0, 2**16))
def test_entries_constant_in_both_selections_are_counted(coding, margin, kind, width, seed):
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    encoder = nn.Sequential(nn.Linear(8, width), nn.Tanh(), nn.Linear(width, 4))
    opt = torch.optim.SGD(encoder.parameters(), lr=0.01)
    x1, x2 = torch.randn(PAIRS, 8, generator=g), torch.randn(PAIRS, 8, generator=g)
    y = _labels(coding, g)
    fn = _loss(kind, margin)
    with gradarg.watch(encoder) as w:
        opt.zero_grad()
        z1, z2 = encoder(x1), encoder(x2)
        fn(z1, z2, y).backward()
        opt.step()
    # the truth, from torch: rows whose label is neither 1 nor -1 get exactly zero gradient
    e1, e2 = z1.detach().requires_grad_(), z2.detach().requires_grad_()
    g1, g2 = torch.autograd.grad(fn(e1, e2, y), [e1, e2])
    odd = (y != 1) & (y != -1)
    zero_rows = (g1.abs().sum(1) == 0) & (g2.abs().sum(1) == 0)
    if kind == "cosine":
        assert bool(zero_rows[odd].all())
    text = w.summary(checks=False)
    said = re.search(r"(\d+) of the (\d+) entries of the loss took the constant branch", text)
    if kind == "cosine" and int(odd.sum()):
        assert said, text
        assert not text.startswith("gradients ok"), text
        assert (int(said.group(1)), int(said.group(2))) == (int(odd.sum()), PAIRS), text
        assert "cosine_embedding_loss" in text and "2 * label - 1" in text, text
    else:
        assert said is None, text
