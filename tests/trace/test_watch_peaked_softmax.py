"""Class: an attention softmax nearly one-hot on most of its rows (scores q · k far above unit
scale) is named, with how many rows put more than 0.99 of their weight on one key; and when
the scores come from an embedding multiplied by a number that makes its entries of standard
deviation 2 or more (``embedding * sqrt(d_model)`` on ``nn.Embedding``'s default N(0, 1)
rows), that number, as the cause; without it, what this batch shows is a note beside "ok"
(trained attention can be peaked on purpose).  Attention at unit scale, a confident
classifier's softmax (not from a product of two tensors) and a causal mask's first rows (one
key allowed) are not counted.

The truth comes from torch alone: the attention weights are computed again here from the
inputs (``softmax(q kᵀ / sqrt(d))`` for ``scaled_dot_product_attention``, the weights
``nn.MultiheadAttention`` returns, the test's own softmax), the rows with two keys or more
counted and those above 0.99 counted.  Generated: the attention (``nn.MultiheadAttention``, a
hand-written ``bmm`` softmax, ``scaled_dot_product_attention`` with or without a causal mask),
the inputs' scale over two orders of magnitude, the lengths, widths, heads and seed.
"""

from __future__ import annotations

import math
import re

import pytest
import torch
from hypothesis import assume, event, example, given, settings
from hypothesis import strategies as st
from torch import nn
from torch.nn import functional as F

import gradarg

PHRASE = re.compile(r"nearly one-hot on this batch: (\d+) of its (\d+) rows")
PEAK, SHARE, ROWS = 0.99, 0.4, 8


class Attend(nn.Module):
    def __init__(self, d: int, heads: int, kind: str, causal: bool):
        super().__init__()
        self.kind, self.causal, self.heads = kind, causal, heads
        if kind == "mha":
            self.attn = nn.MultiheadAttention(d, heads, batch_first=True)
        else:
            self.q, self.k, self.v = nn.Linear(d, d), nn.Linear(d, d), nn.Linear(d, d)
        self.head = nn.Linear(d, 2)
        self.weights: torch.Tensor | None = None

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.kind == "mha":
            a, w = self.attn(x, x, x, need_weights=True, average_attn_weights=False)
            self.weights = w.detach()
        elif self.kind == "bmm":
            q, k = self.q(x), self.k(x)
            w = torch.softmax(torch.bmm(q, k.transpose(1, 2)) / math.sqrt(x.shape[-1]), -1)
            self.weights = w.detach()
            a = torch.bmm(w, self.v(x))
        else:
            b, n, d = x.shape
            q, k, v = (f(x).view(b, n, self.heads, -1).transpose(1, 2)
                       for f in (self.q, self.k, self.v))
            a = F.scaled_dot_product_attention(q, k, v, is_causal=self.causal)
            s = q.detach().double() @ k.detach().double().transpose(-2, -1)
            s = s / math.sqrt(q.shape[-1])
            if self.causal:
                s = s.masked_fill(torch.ones(n, n, dtype=torch.bool).triu(1), -math.inf)
            self.weights = torch.softmax(s, -1).float()
            a = a.transpose(1, 2).reshape(b, n, d)
        return self.head((x + a).mean(1))


def truth(weights: torch.Tensor) -> tuple[int, int, float]:
    """Rows with two keys or more, those above PEAK, and the largest row's distance to PEAK."""
    rows = weights.reshape(-1, weights.shape[-1])
    rows = rows[(rows > 0).sum(1) >= 2]
    if not rows.shape[0]:  # every row exactly one-hot (the softmax saturated in float32)
        return 0, 0, math.inf
    top = rows.max(1).values
    return int((top > PEAK).sum()), rows.shape[0], float((top - PEAK).abs().min())


@settings(max_examples=40, deadline=None)
@given(kind=st.sampled_from(["mha", "bmm", "sdpa"]), causal=st.booleans(),
       scale=st.sampled_from([0.1, 0.5, 1.0, 2.0, 4.0, 8.0, 12.0]),
       length=st.integers(2, 12), batch=st.integers(1, 4), heads=st.sampled_from([1, 2]),
       seed=st.integers(0, 2**16))
@example(kind="bmm", causal=False, scale=12.0, length=8, batch=1, heads=1, seed=2672)
@example(kind="bmm", causal=False, scale=12.0, length=2, batch=1, heads=1,
         seed=195)  # both rows exactly one-hot in float32: no row with two keys
def test_nearly_one_hot_attention_is_named_with_its_count(kind, causal, scale, length, batch,
                                                          heads, seed):
    torch.manual_seed(seed)
    d = 8
    model = Attend(d, heads, kind, causal and kind == "sdpa")
    x, y = torch.randn(batch, length, d) * scale, torch.randint(0, 2, (batch,))
    with gradarg.watch(model) as w:
        F.cross_entropy(model(x), y).backward()
    peaked, rows, margin = truth(model.weights)
    assume(margin > 1e-4)  # no row on the threshold, where rounding decides
    named = rows >= ROWS and peaked >= SHARE * rows
    event(f"{kind}: {'named' if named else 'not named'}")
    text = w.summary(checks=False)
    found = PHRASE.search(text)
    assert (found is not None) == named, (peaked, rows, text)
    if named:
        assert (int(found.group(1)), int(found.group(2))) == (peaked, rows), text
        # no embedding scaled up under these scores: what the batch shows, no cause; a
        # saturated softmax may shrink the gradient reaching q and k by orders of magnitude,
        # which is then the finding (the summary's own norms), else the step is ok
        assert "too large" not in text, text
        assert text.startswith(("gradients ok:", "vanishing gradient:")), text


class Encoder(nn.Module):
    """The Annotated Transformer's embedding, ``lut(x) * sqrt(d_model)``, under attention."""

    def __init__(self, d: int, small_init: bool, factor: float):
        super().__init__()
        self.lut = nn.Embedding(30, d)
        if small_init:
            nn.init.normal_(self.lut.weight, std=d**-0.5)
        self.factor = factor
        self.attn = nn.MultiheadAttention(d, 4, batch_first=True)
        self.head = nn.Linear(d, 3)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        x = self.lut(ids) * self.factor
        a, w = self.attn(x, x, x, need_weights=True, average_attn_weights=False)
        self.weights = w.detach()
        return self.head((x + a).mean(1))


@settings(max_examples=20, deadline=None)
@given(d=st.sampled_from([16, 32, 64]), small_init=st.booleans(), seed=st.integers(0, 2**16))
def test_the_embedding_scale_is_named_where_it_made_the_scores(d, small_init, seed):
    torch.manual_seed(seed)
    model = Encoder(d, small_init, math.sqrt(d))
    ids = torch.randint(0, 30, (16, 10))
    with gradarg.watch(model) as w:
        F.cross_entropy(model(ids), torch.randint(0, 3, (16,))).backward()
    peaked, rows, margin = truth(model.weights)
    assume(margin > 1e-4)
    text = w.summary(checks=False)
    named = peaked >= SHARE * rows
    event("named" if named else "not named")
    assert (PHRASE.search(text) is not None) == named, text
    std = float(model.lut.weight.detach().std())
    cause = f"scaled by {math.sqrt(d):.3g} = sqrt({d}), sqrt(d_model)"
    # the cause only where the scale makes entries of standard deviation 2 or more
    assert (cause in text) == (named and math.sqrt(d) * std >= 2), text
    if cause in text:
        assert f"standard deviation {std:.3g}" in text and not text.startswith("gradients ok"), text


def test_an_embedding_at_the_paper_scale_is_not_the_cause():
    """Rows of standard deviation d ** -0.5 times sqrt(d): entries at unit scale.  Projections
    ten times too large saturate the softmax instead: it is named, the embedding is not."""
    torch.manual_seed(0)
    model = Encoder(32, True, math.sqrt(32))
    with torch.no_grad():
        model.attn.in_proj_weight.mul_(10)
    with gradarg.watch(model) as w:
        F.cross_entropy(model(torch.randint(0, 30, (16, 10))), torch.zeros(16).long()).backward()
    peaked, rows, _ = truth(model.weights)
    assert peaked >= SHARE * rows  # the truth: saturated
    text = w.summary(checks=False)
    assert PHRASE.search(text) and "scaled by" not in text and text.startswith("gradients ok:"), text


@pytest.mark.parametrize("case", ["classifier", "unit scale", "causal first rows"])
def test_look_alikes_are_not_named(case):
    """A confident classifier (its softmax over a Linear's output, not a product of two
    tensors), attention at unit scale, and a causal attention over two tokens whose first row
    has one key (one-hot by the mask, not counted; the second row is not peaked)."""
    torch.manual_seed(0)
    if case == "classifier":
        model = nn.Linear(8, 5)
        with gradarg.watch(model) as w:
            p = torch.softmax(model(torch.randn(64, 8) * 50), -1)
            F.mse_loss(p, torch.eye(5)[torch.randint(0, 5, (64,))]).backward()
        assert float((p.max(-1).values > PEAK).float().mean()) > SHARE  # the truth
    elif case == "unit scale":
        model = Attend(8, 2, "mha", False)
        with gradarg.watch(model) as w:
            F.cross_entropy(model(torch.randn(8, 10, 8) * 0.5), torch.zeros(8).long()).backward()
        assert truth(model.weights)[0] == 0
    else:
        model = Attend(8, 1, "sdpa", True)
        with gradarg.watch(model) as w:
            F.cross_entropy(model(torch.randn(16, 2, 8) * 0.1), torch.zeros(16).long()).backward()
        assert float((model.weights[..., 0, :].max(-1).values == 1).float().mean()) == 1.0
        assert truth(model.weights)[0] == 0
    assert "nearly one-hot" not in w.summary(checks=False)


def test_the_watch_does_not_change_the_step():
    torch.manual_seed(1)
    model = Encoder(32, False, math.sqrt(32))
    ids, y = torch.randint(0, 30, (8, 10)), torch.randint(0, 3, (8,))
    F.cross_entropy(model(ids), y).backward()
    plain = {n: p.grad.clone() for n, p in model.named_parameters()}
    model.zero_grad()
    with gradarg.watch(model) as w:
        F.cross_entropy(model(ids), y).backward()
    assert "nearly one-hot" in w.summary(checks=False)
    for n, p in model.named_parameters():
        assert torch.equal(p.grad, plain[n]), n
