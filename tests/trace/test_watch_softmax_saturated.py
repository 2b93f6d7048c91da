"""Class: a softmax whose output rows are exactly one-hot (saturated: a low temperature, a
``gumbel_softmax`` with a tiny ``tau``, logits scaled up) passes no gradient back on those
rows; when the gradient before it vanishes or is all zero, the watch names the softmax output
a module took, with how many rows are one-hot.  An unsaturated softmax is never named.

The truth comes from torch: the softmax's output as the decoder received it (a forward hook
of the test's own), its rows counted exactly one-hot, and ``torch.autograd.grad`` of the loss
with respect to the logits: zero on every one-hot row.  Generated: plain ``softmax`` of
``logits / tau`` or ``gumbel_softmax``, the temperature over twelve orders of magnitude, the
batch, the number of categories, the seed.
"""

from __future__ import annotations

import re

import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn
from torch.nn import functional as F

import gradarg

PHRASE = re.compile(r"softmax output with (\d+) of (\d+) rows exactly one-hot")


class Relaxed(nn.Module):
    def __init__(self, k, gumbel):
        super().__init__()
        self.enc = nn.Sequential(nn.Linear(6, 12), nn.Tanh(), nn.Linear(12, k))
        self.dec = nn.Linear(k, 6)
        self.gumbel = gumbel
        self.logits = None

    def forward(self, x, tau):
        self.logits = self.enc(x)
        if self.gumbel:
            z = F.gumbel_softmax(self.logits, tau=tau)
        else:
            z = torch.softmax(self.logits / tau, dim=-1)
        return self.dec(z)


@settings(max_examples=30, deadline=None)
@given(gumbel=st.booleans(), log_tau=st.floats(-7, 1), batch=st.integers(4, 32),
       k=st.integers(2, 6), seed=st.integers(0, 2**16))
def test_a_saturated_softmax_is_named_with_its_one_hot_rows(gumbel, log_tau, batch, k, seed):
    torch.manual_seed(seed)
    model = Relaxed(k, gumbel)
    x = torch.randn(batch, 6)
    taken = []
    handle = model.dec.register_forward_pre_hook(lambda m, a: taken.append(a[0].detach()))
    with gradarg.watch(model) as w:
        loss = F.mse_loss(model(x, 10.0 ** log_tau), x)
        (g_logits,) = torch.autograd.grad(loss, model.logits, retain_graph=True)
        loss.backward()
    handle.remove()
    z = taken[0]
    one_hot = ((z == 0) | (z == 1)).all(-1)
    text = w.summary()
    m = PHRASE.search(text)
    if m is not None:
        named, rows = int(m.group(1)), int(m.group(2))
        assert (named, rows) == (int(one_hot.sum()), batch)
        assert 2 * named >= rows
        # the claim: nothing goes back through a one-hot row
        assert bool((g_logits[one_hot] == 0).all())
        assert "vanishing gradient" in text or "all-zero gradient" in text
    else:
        assert 2 * int(one_hot.sum()) < batch or (
            "vanishing gradient" not in text and "all-zero gradient" not in text), text
    if bool(one_hot.all()):  # fully saturated: the encoder gets nothing, and it is said
        assert all(bool((p.grad == 0).all()) for p in model.enc.parameters())
        assert m is not None, text
    if not bool(one_hot.any()):
        assert m is None
