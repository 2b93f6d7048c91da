"""Class: a loss made of weighted terms, one of them weighted by exactly 0 (a multi-task
``alpha * loss_a + (1 - alpha) * loss_b`` at ``alpha = 1``), whose term alone reaches some
parameters: those get an exactly zero gradient, and the watch names the module and the
zero weight; a positive weight says nothing, a negative one is the ascent already named.

The truth comes from torch: ``torch.autograd.grad`` of each task's loss alone, and the final
``.grad`` of each head.  Generated: the two weights (zero, positive, negative, written as
``1 - alpha`` or as a constant), the loss functions, the seed.
"""

from __future__ import annotations

import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn
from torch.nn import functional as F

import gradarg

ZERO = "term of the loss weighted by 0"


class TwoHead(nn.Module):
    def __init__(self):
        super().__init__()
        self.trunk = nn.Sequential(nn.Linear(4, 8), nn.Tanh())
        self.head_a = nn.Linear(8, 2)
        self.head_b = nn.Linear(8, 3)

    def forward(self, x):
        h = self.trunk(x)
        return self.head_a(h), self.head_b(h)


@settings(max_examples=25, deadline=None)
@given(alpha=st.sampled_from([0.0, 0.3, 1.0]), other=st.sampled_from([None, 0.0, 2.0]),
       fn=st.sampled_from(["mse", "l1", "huber"]), seed=st.integers(0, 2**16))
def test_a_term_weighted_by_zero_is_named(alpha, other, fn, seed):
    torch.manual_seed(seed)
    model = TwoHead()
    loss_fn = {"mse": F.mse_loss, "l1": F.l1_loss, "huber": F.huber_loss}[fn]
    x, ya, yb = torch.randn(8, 4), torch.randn(8, 2), torch.randn(8, 3)
    wa = alpha
    wb = 1 - alpha if other is None else other
    with gradarg.watch(model) as w:
        pa, pb = model(x)
        (wa * loss_fn(pa, ya) + wb * loss_fn(pb, yb)).backward()
    text = w.summary()
    zero_a = all(bool((p.grad == 0).all()) for p in model.head_a.parameters())
    zero_b = all(bool((p.grad == 0).all()) for p in model.head_b.parameters())
    assert zero_a == (wa == 0) and zero_b == (wb == 0)  # the truth, from torch
    if zero_a or zero_b:
        assert ZERO in text, text
        assert "module 'head_a'" in text or "module 'head_b'" in text
        assert "module 'head_a'" in text if not zero_b else True
        assert "module 'head_b'" in text if not zero_a else True
        assert "'trunk'" not in text.split(ZERO)[0].rsplit(";", 1)[-1]  # reached by both
    else:
        assert ZERO not in text, text
