"""Class: attention whose scores were multiplied by a 0/1 mask before the softmax (non-edges,
padding) is named, with the weight the hidden positions still got (``exp(0)``); masking by
``masked_fill`` with ``-inf`` or the dtype's lowest value, an additive mask, or a mask of
ones only, is not.

The truth comes from torch alone: the softmax's output, and the mean weight per row it gives
to the positions where the mask is 0, computed by the test.  Generated: how the mask is
applied, its density, the number of positions, the batch of heads, the widths.
"""

from __future__ import annotations

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn

import gradarg

SAID = "took scores multiplied by a 0/1 mask"


class Attend(nn.Module):
    def __init__(self, width: int, how: str):
        super().__init__()
        self.q, self.k, self.v = (nn.Linear(width, width) for _ in range(3))
        self.out = nn.Linear(width, 2)
        self.how = how

    def forward(self, x, mask):
        scores = self.q(x) @ self.k(x).transpose(-1, -2) / x.shape[-1] ** 0.5
        if self.how == "multiply":
            scores = scores * mask
        elif self.how == "multiply_bool":
            scores = scores * mask.bool()
        elif self.how == "fill_inf":
            scores = scores.masked_fill(mask == 0, float("-inf"))
        elif self.how == "fill_min":
            scores = scores.masked_fill(mask == 0, torch.finfo(scores.dtype).min)
        else:  # additive
            scores = scores + (mask - 1) * 1e9
        attn = torch.softmax(scores, dim=-1)
        return self.out(attn @ self.v(x)).mean(1), attn


@pytest.mark.parametrize("how", ["multiply", "multiply_bool", "fill_inf", "fill_min",
                                 "additive"])
@settings(max_examples=6, deadline=None)
@given(positions=st.integers(3, 12), heads=st.integers(1, 3), width=st.integers(2, 6),
       density=st.sampled_from([0.3, 0.6, 1.0]), seed=st.integers(0, 2**16))
def test_a_softmax_of_multiplied_scores_is_named(how, positions, heads, width, density, seed):
    torch.manual_seed(seed)
    model = Attend(width, how)
    x = torch.randn(heads, positions, width)
    mask = (torch.rand(positions, positions) < density).float()
    mask.fill_diagonal_(1.0)  # every row keeps itself
    y = torch.randint(0, 2, (heads,))
    with gradarg.watch(model) as w:
        out, attn = model(x, mask)
        nn.functional.cross_entropy(out, y).backward()
    # the truth, from torch: the weight the softmax gave to positions the mask hides
    leaked = (attn.detach() * (mask == 0)).sum(-1).mean().item()
    assert (leaked > 0) == (how.startswith("multiply") and bool((mask == 0).any()))
    text = w.summary(checks=False)
    assert (SAID in text) == (leaked > 0), (how, text)
    if leaked > 0:
        assert f"{leaked:.2g} of its weight" in text, (leaked, text)
