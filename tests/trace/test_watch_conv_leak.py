"""Class: a next-step predictor (WaveNet, a temporal convolutional network) whose ``Conv1d``
layers are padded on both sides, ``padding=d (k - 1) / 2`` or ``"same"``: output t reads inputs
after t, the target among them, and the loss falls by copying it.  The watch said "ok".

Invariant: a convolution leak is stated only when, by torch's own account, the prediction at
some position depends on the input at a later position; every model whose convolutions keep
their length by padding both sides is named; causal models (left padding only, or padding
``d (k - 1)`` on both sides with the last outputs dropped) and targets that are not the next
step (a reconstruction, random targets) are not.  Truth: ``torch.autograd.grad`` of one output
with respect to the input.  Generated: the padding, the kernel, the dilation, the targets, the
loss, the seed.
"""

from __future__ import annotations

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn
from torch.nn import functional as F

import gradarg

T = 16


class TCN(nn.Module):
    def __init__(self, how, k, d):
        super().__init__()
        self.how, self.k, self.d = how, k, d
        total = d * (k - 1)
        pad = {"same": "same", "symmetric": total // 2, "left": 0, "chop": total}[how]
        if how == "symmetric" and total % 2:
            pad = 0  # an odd total cannot be split evenly: the left-padded model instead
            self.how = "left"
        self.inp = nn.Conv1d(1, 4, 1)
        self.conv = nn.Conv1d(4, 4, k, dilation=d, padding=pad)
        self.out = nn.Conv1d(4, 1, 1)

    def forward(self, x):
        h = torch.tanh(self.inp(x))
        if self.how == "left":
            h = F.pad(h, (self.d * (self.k - 1), 0))
        h = torch.tanh(self.conv(h))
        if self.how == "chop" and self.d * (self.k - 1):
            h = h[..., : -self.d * (self.k - 1)]
        return self.out(h)


@pytest.mark.filterwarnings("ignore:Using padding='same' with even kernel")
@settings(max_examples=30, deadline=None)
@given(how=st.sampled_from(["same", "symmetric", "left", "chop"]), k=st.sampled_from([2, 3, 5]),
       d=st.sampled_from([1, 2]), targets=st.sampled_from(["next", "next", "same", "random"]),
       loss=st.sampled_from(["mse", "huber"]), seed=st.integers(0, 2**16))
def test_a_convolution_reading_later_steps_is_named(how, k, d, targets, loss, seed):
    torch.manual_seed(seed)
    model = TCN(how, k, d)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    x = torch.randn(4, 1, T)
    y = {"next": x[..., 1:], "same": x[..., :-1], "random": torch.randn(4, 1, T - 1)}[targets]
    f = F.mse_loss if loss == "mse" else F.huber_loss
    with gradarg.watch(model) as w:
        opt.zero_grad()
        f(model(x)[..., :-1], y).backward()
        opt.step()
    probe = x[:1].clone().requires_grad_()
    (g,) = torch.autograd.grad(model(probe)[0, 0, T // 2], probe)
    later = bool(g[0, 0, T // 2 + 1:].abs().sum() > 0)  # the output at T/2 reads after it
    text = w.summary(checks=False)
    named = "its convolution reads later positions" in text
    if named:
        assert later and targets == "next", (how, k, d, text)
        assert "module 'conv' (Conv1d)" in text and not text.startswith("gradients ok"), text
    if targets == "next" and model.how in ("same", "symmetric") and later:
        assert named, (how, k, d, text)
