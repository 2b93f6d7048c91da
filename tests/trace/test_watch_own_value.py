"""Class: an autoregressive model trained to reproduce one of its inputs while the output at a
position reads the input at that same position (a MADE output layer masked with ``>=`` where
``>`` belongs; a PixelCNN whose first layer takes mask B where mask A belongs; a causal attention
layer over steps whose mask keeps the diagonal, as a Decision Transformer reading a_t from a_t's
own token, given a second, conditioning input by position or keyword).  The watch names it
instead of "ok".

The truth comes from torch alone: the model is autoregressive by construction (its masks), and
whether output ``p`` reads input ``p`` is read from ``torch.func.jacrev`` of the model at one
example.  Look-alikes that must not be named: the same models with the right masks (the causal
one fed its steps shifted by one, after a start token), attention with no mask (every step reads
every other), a plain autoencoder, one whose weights are multiplied by fixed 0/1 masks in no
order (random, or output ``o`` reading inputs ``o`` and ``o + 1`` mod ``d``: a cycle with no
2-cycle) or by masks that keep each position to itself (with at most one edge between
positions), one pruned by ``torch.nn.utils.prune`` (a copy of it fails: its ``weight`` is not a
leaf), a denoising target (the clean input, the model fed a noisy one), and the buggy models trained
on another target.  The watch must not touch the model, its ``.grad`` or torch's random state.
"""

from __future__ import annotations

import re
import warnings

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn
from torch.nn import functional as F
from torch.nn.utils import prune

import gradarg

SAID = r"output at a position reads the input at that same position"


class MaskedLinear(nn.Linear):
    def __init__(self, n_in, n_out, mask):
        super().__init__(n_in, n_out)
        self.register_buffer("mask", mask.float())

    def forward(self, x):
        return F.linear(x, self.weight * self.mask, self.bias)


class MADE(nn.Module):
    """Germain et al. 2015: hidden unit k reads input d if m(k) >= m(d); output d reads hidden
    unit k if m(d) > m(k) (``strict``), or m(d) >= m(k) (the bug)."""

    def __init__(self, d, hidden, strict, gen):
        super().__init__()
        order = torch.randperm(d, generator=gen) + 1
        degrees = torch.randint(1, d, (hidden,), generator=gen)
        self.inp = MaskedLinear(d, hidden, degrees[:, None] >= order[None, :])
        out_mask = (order[:, None] > degrees[None, :]) if strict else (
            order[:, None] >= degrees[None, :])
        self.out = MaskedLinear(hidden, d, out_mask)

    def forward(self, x):
        return self.out(torch.tanh(self.inp(x)))


class MaskedConv(nn.Conv2d):
    def __init__(self, c_in, c_out, size, kind):
        super().__init__(c_in, c_out, size, padding=size // 2)
        mask = torch.ones(size, size)
        c = size // 2
        mask[c, c + (kind == "B"):] = 0
        mask[c + 1:, :] = 0
        self.register_buffer("mask", mask.expand_as(self.weight).clone())

    def forward(self, x):
        return F.conv2d(x, self.weight * self.mask, self.bias, padding=self.padding)


class PixelCNN(nn.Module):
    def __init__(self, first):
        super().__init__()
        self.a = MaskedConv(1, 8, 5, first)
        self.b = MaskedConv(8, 8, 3, "B")
        self.out = nn.Conv2d(8, 1, 1)

    def forward(self, x):
        return self.out(torch.tanh(self.b(torch.tanh(self.a(x)))))


class AE(nn.Module):
    def __init__(self, d, hidden, kind, gen):
        super().__init__()
        self.enc, self.dec = nn.Linear(d, hidden), nn.Linear(hidden, d)
        if kind == "sparse":  # a fixed random connectivity: 0/1 masks in no order
            self.enc = MaskedLinear(d, hidden, torch.rand(hidden, d, generator=gen) < 0.7)
            self.dec = MaskedLinear(hidden, d, torch.rand(d, hidden, generator=gen) < 0.7)
        own = torch.arange(hidden)[:, None] % d == torch.arange(d)[None, :]
        if kind == "diagonal":  # each output reads its own input only: no order to keep
            self.enc, self.dec = MaskedLinear(d, hidden, own), MaskedLinear(hidden, d, own.T)
        if kind == "cyclic":  # output o reads inputs o and o + 1 (mod d): a cycle, no order
            self.enc = MaskedLinear(d, hidden, own)
            self.dec = MaskedLinear(hidden, d, own.T | own.roll(-1, 1).T)
        if kind == "near-diagonal":  # its own input, and output 1 reads input 0 too: one edge
            near = own.T.clone()
            near[1] |= own.T[0]
            self.enc, self.dec = MaskedLinear(d, hidden, own), MaskedLinear(hidden, d, near)
        if kind == "pruned":
            prune.random_unstructured(self.enc, "weight", amount=0.3)
            prune.random_unstructured(self.dec, "weight", amount=0.3)

    def forward(self, x):
        return self.dec(torch.tanh(self.enc(x)))


class Causal(nn.Module):
    """Attention over the steps of ``(batch, T, F)``: ``mask`` "causal" (each step reads itself
    and earlier ones), "shifted" (the steps moved one later behind a learned start: each reads
    earlier ones only) or "none"; ``c``, a ``(batch, T, 1)`` conditioning input, is optional."""

    def __init__(self, f, mask):
        super().__init__()
        self.mask = mask
        self.embed, self.cond = nn.Linear(f, 16), nn.Linear(1, 16)
        self.start = nn.Parameter(torch.randn(1, 1, 16))
        self.attn = nn.MultiheadAttention(16, 2, batch_first=True)
        self.out = nn.Linear(16, f)

    def forward(self, x, c=None):
        h = self.embed(x) + (0 if c is None else self.cond(c))
        t = x.shape[1]
        if self.mask == "shifted":
            h = torch.cat([self.start.expand(len(h), 1, 16), h[:, :-1]], 1)
        later = None if self.mask == "none" else torch.ones(t, t, dtype=torch.bool).triu(1)
        a, _ = self.attn(h, h, h, attn_mask=later, need_weights=False)
        return self.out(torch.tanh(a + h))


def build(kind, right, d, seed):
    gen = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    if kind in ("causal", "bidirectional"):
        mask = "none" if kind == "bidirectional" else "shifted" if right else "causal"
        return Causal(2, mask), torch.rand(32, d, 2, generator=gen).round()
    if kind == "made":
        return MADE(d, 3 * d, right, gen), torch.rand(32, d, generator=gen).round()
    if kind == "pixelcnn":
        return PixelCNN("A" if right else "B"), torch.rand(16, 1, 6, 6, generator=gen).round()
    return AE(d, 2 * d, kind, gen), torch.rand(32, d, generator=gen).round()


def reads_own(model, x):
    """Whether some output position reads its own input position: torch.func.jacrev."""
    one = x[:1]
    with warnings.catch_warnings():  # vmap over attention's backward runs a slow loop
        warnings.simplefilter("ignore", UserWarning)
        jac = torch.func.jacrev(lambda v: model(v))(one)  # (1, *out, 1, *in)
    if one.dim() == 3:  # steps: output step t against input step t, every feature
        return any(bool(jac[0, t, :, 0, t, :].ne(0).any()) for t in range(one.shape[1]))
    if one.dim() == 2:
        return bool(jac[0, :, 0, :].diagonal().ne(0).any())
    flat = jac.reshape(one[0, 0].numel(), one[0, 0].numel())  # one channel in and out
    return bool(flat.diagonal().ne(0).any())


@settings(max_examples=50, deadline=None)
@given(kind=st.sampled_from(["made", "made", "pixelcnn", "pixelcnn", "causal", "causal",
                             "bidirectional", "plain", "pruned", "sparse", "sparse", "diagonal",
                             "cyclic", "near-diagonal"]),
       right=st.booleans(), target=st.sampled_from(["input", "input", "noisy", "other"]),
       loss=st.sampled_from(["bce", "mse"]), d=st.sampled_from([6, 9]),
       call=st.sampled_from(["alone", "positional", "keyword"]), seed=st.integers(0, 2**16))
def test_an_autoregressive_model_reading_its_own_value_is_named(kind, right, target, loss, d,
                                                                call, seed):
    check(kind, right, target, loss, d, call, seed)


@pytest.mark.parametrize("kind", ["cyclic", "near-diagonal", "diagonal", "sparse", "plain"])
@pytest.mark.parametrize("d", [6, 9])
def test_a_model_reading_its_own_value_in_no_order_is_not_named(kind, d):
    """Every look-alike with the target equal to the input, where the random draw above may
    miss one: a cycle through all positions, a single edge, none."""
    check(kind, False, "input", "bce", d, "alone", d)


def check(kind, right, target, loss, d, call, seed):
    """One step of training under the watch, against the truth from torch.func.jacrev."""
    model, x = build(kind, right, d, seed)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    feed = x + 0.3 * torch.randn_like(x) if target == "noisy" else x
    y = {"input": x, "noisy": x, "other": torch.rand_like(x).round()}[target]
    c = torch.rand(x.shape[0], d, 1) if kind in ("causal", "bidirectional") else None

    def forward():
        if c is None or call == "alone":
            return model(feed)
        return model(feed, c) if call == "positional" else model(feed, c=c)

    with gradarg.watch(model) as w:
        for _ in range(2):
            opt.zero_grad()
            out = forward()
            (F.binary_cross_entropy_with_logits(out, y) if loss == "bce"
             else F.mse_loss(out, y)).backward()
            opt.step()
    before = {n: p.detach().clone() for n, p in model.named_parameters()}
    grads = {n: None if p.grad is None else p.grad.clone() for n, p in model.named_parameters()}
    state = torch.random.get_rng_state()
    text = w.summary(checks=False)
    # the watch's copy of the model changed nothing of the caller's
    assert torch.equal(torch.random.get_rng_state(), state)
    for n, p in model.named_parameters():
        assert torch.equal(p, before[n]), n
        assert (p.grad is None) if grads[n] is None else torch.equal(p.grad, grads[n]), n
    autoregressive = kind in ("made", "pixelcnn", "causal")
    expected = autoregressive and target == "input" and reads_own(model.eval(), x)
    said = re.search(SAID, text) is not None
    assert said == expected, text
    if said:
        assert not text.startswith("gradients ok"), text
        n = re.search(r"at (\d+) of (\d+) positions", text)
        positions = x.shape[1] if kind == "causal" else x[0, 0].numel() if x.dim() == 4 else d
        assert n is not None and 0 < int(n[1]) <= int(n[2]) == positions


class Returning(nn.Module):
    """A MADE with the bug whose call returns something other than the prediction: the loss
    itself, a tuple or a dict."""

    def __init__(self, returns):
        super().__init__()
        self.made, self.returns = MADE(6, 18, False, torch.Generator().manual_seed(0)), returns

    def forward(self, x):
        out = self.made(x)
        if self.returns == "loss":
            return F.binary_cross_entropy_with_logits(out, x)
        return (out, x.sum()) if self.returns == "tuple" else {"logits": out}


@pytest.mark.parametrize("returns", ["loss", "tuple", "dict"])
def test_a_call_that_returns_no_prediction_is_not_read(returns):
    """The dependence is read from the call's tensor output only; any other return passes
    without a word from this check and without an error."""
    model = Returning(returns)
    x = torch.rand(16, 6).round()
    with gradarg.watch(model) as w:
        got = model(x)
        out = got if returns == "loss" else got[0] if returns == "tuple" else got["logits"]
        loss = out if returns == "loss" else F.binary_cross_entropy_with_logits(out, x)
        loss.backward()
    assert re.search(SAID, w.summary(checks=False)) is None
