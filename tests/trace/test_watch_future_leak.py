"""Class: a language model trained on next-token targets whose attention lets a position read
later positions (no causal mask, or the triangle flipped): the loss falls by copying the
target; the watch names the leak instead of "ok".  A causal mask (``tril``, ``is_causal=True``,
a float mask with -inf above the diagonal, ``nn.TransformerEncoderLayer`` given
``generate_square_subsequent_mask``), or targets that are not the next tokens, say nothing of
the kind.

The truth comes from torch alone: the logits at position t depend on the input at a later
position s > t exactly when ``torch.autograd.grad`` of those logits with respect to the
embeddings is nonzero at s.  Generated: the attention (hand-written softmax, SDPA,
``TransformerEncoderLayer``, retention's scores times a decay matrix with no softmax, a
softmax's weights times a constant dropout mask), the mask, the targets, the widths and the
seed.
"""

from __future__ import annotations

import math
import re

import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn
from torch.nn import functional as F

import gradarg

VOCAB, T = 7, 6


class LM(nn.Module):
    def __init__(self, dim, attention, mask):
        super().__init__()
        self.tok, self.pos = nn.Embedding(VOCAB, dim), nn.Embedding(T, dim)
        self.qkv = nn.Linear(dim, 3 * dim)
        self.layer = nn.TransformerEncoderLayer(dim, 1, 2 * dim, dropout=0.0,
                                                batch_first=True)
        self.out = nn.Linear(dim, VOCAB)
        self.attention, self.mask = attention, mask

    def embed(self, x):
        return self.tok(x) + self.pos(torch.arange(x.shape[1]))

    def body(self, h):
        n = h.shape[1]
        tril = torch.ones(n, n, dtype=torch.bool).tril()
        keep = {"causal": tril, "flipped": tril.T, "none": None}[self.mask]
        if self.attention == "layer":
            m = None if keep is None else torch.zeros(n, n).masked_fill(~keep, -math.inf)
            return self.out(self.layer(h, src_mask=m))
        q, k, v = self.qkv(h).chunk(3, -1)
        if self.attention == "retention":  # no softmax: the decay matrix is the mask
            d = torch.arange(n)[:, None] - torch.arange(n)[None, :]
            decay = 0.9 ** d.abs().float()
            if keep is not None:
                decay = decay * keep
            return self.out(h + ((q @ k.transpose(1, 2)) * decay) @ v)
        if self.attention == "dropped":  # weights times a constant 0/2 mask after the softmax
            s = (q @ k.transpose(1, 2)).masked_fill(~tril, -math.inf) if keep is not None \
                else q @ k.transpose(1, 2)
            if self.mask == "flipped":
                s = (q @ k.transpose(1, 2)).masked_fill(tril.T.logical_not(), -math.inf)
            drop = (torch.rand(n, n, generator=torch.Generator().manual_seed(n)) > 0.3) * 2.0
            return self.out(h + (s.softmax(-1) * drop) @ v)
        if self.attention == "sdpa":
            if self.mask == "causal":
                a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            else:
                a = F.scaled_dot_product_attention(q, k, v, attn_mask=keep)
        else:
            s = q @ k.transpose(1, 2) / math.sqrt(q.shape[-1])
            if keep is not None:
                s = s.masked_fill(~keep, -math.inf)
            a = s.softmax(-1) @ v
        return self.out(h + a)

    def forward(self, x):
        return self.body(self.embed(x))


@settings(max_examples=30, deadline=None)
@given(attention=st.sampled_from(["softmax", "sdpa", "layer", "retention", "dropped"]),
       mask=st.sampled_from(["none", "causal", "causal", "flipped"]),
       targets=st.sampled_from(["next", "next", "same", "random"]),
       dim=st.sampled_from([8, 16]), seed=st.integers(0, 2**16))
def test_attention_reading_later_positions_is_named(attention, mask, targets, dim, seed):
    torch.manual_seed(seed)
    model = LM(dim, attention, mask)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    seq = torch.randint(0, VOCAB, (8, T + 1))
    x = seq[:, :-1]
    y = {"next": seq[:, 1:], "same": x, "random": torch.randint(0, VOCAB, (8, T))}[targets]
    with gradarg.watch(model) as w:
        opt.zero_grad()
        F.cross_entropy(model(x).reshape(-1, VOCAB), y.reshape(-1)).backward()
        opt.step()
    # the truth, from torch: does any position's output depend on a later input?
    h = model.embed(x[:1]).detach().requires_grad_()
    logits = model.body(h)
    later = False
    for t in range(T - 1):
        (g,) = torch.autograd.grad(logits[0, t].sum(), h, retain_graph=True)
        later = later or bool(g[0, t + 1:].abs().sum() > 0)
    text = w.summary(checks=False)
    said = re.search(r"its attention reads later positions", text) is not None
    assert said == (later and targets == "next"), text
    if said:
        assert not text.startswith("gradients ok"), text


@settings(max_examples=20, deadline=None)
@given(dim=st.sampled_from([1, -1, 2]), targets=st.sampled_from(["next", "next", "random"]),
       dim_model=st.sampled_from([8, 16]), seed=st.integers(0, 2**16))
def test_a_norm_over_the_positions_is_named(dim, targets, dim_model, seed):
    """``F.normalize(h)`` on ``(batch, positions, features)`` normalises over the positions
    (its default ``dim=1``): with a causal attention, a position still reads the later ones
    through the norm.  Named exactly when torch's gradient shows a later input read under
    next-token targets; ``dim=-1`` (the features) never."""
    torch.manual_seed(seed)
    model = NormLM(dim_model, dim)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    seq = torch.randint(0, VOCAB, (8, T + 1))
    x = seq[:, :-1]
    y = seq[:, 1:] if targets == "next" else torch.randint(0, VOCAB, (8, T))
    with gradarg.watch(model) as w:
        opt.zero_grad()
        F.cross_entropy(model(x).reshape(-1, VOCAB), y.reshape(-1)).backward()
        opt.step()
    h = model.embed(x[:1]).detach().requires_grad_()
    logits = model.body(F.normalize(h, dim=dim))
    later = False
    for t in range(T - 1):
        (g,) = torch.autograd.grad(logits[0, t].sum(), h, retain_graph=True)
        later = later or bool(g[0, t + 1:].abs().sum() > 0)
    text = w.summary(checks=False)
    said = "a normalisation reads later positions" in text
    assert said == (later and targets == "next"), (dim, text)


class NormLM(LM):
    """A causal attention after ``F.normalize`` of the embeddings over ``dim``."""

    def __init__(self, width, dim):
        super().__init__(width, "softmax", "causal")
        del self.layer  # unused by the hand-written attention
        self.dim = dim

    def forward(self, x):
        return self.body(F.normalize(self.embed(x), dim=self.dim))
