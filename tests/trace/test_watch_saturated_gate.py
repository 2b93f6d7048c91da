"""Class: sigmoid gates that multiply another branch and are saturated in every entry (a
highway layer's transform gate with its bias far from 0) are named, with how close to 0 or 1
they are and their largest derivative; gates with some entries away from 0 and 1, and a
sigmoid at the model's output that multiplies nothing (a classifier's probabilities, however
confident), are not.

The truth comes from torch alone: the gates' outputs in the forward and ``p (1 - p)``,
computed by the test.  Generated: the gate's bias, the number of layers, the width, the
inputs' scale, and whether a saturated output sigmoid with a BCE loss is added.
"""

from __future__ import annotations

import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn

import gradarg

SAID = "sigmoid gate(s) that multiply another branch are saturated in every entry"


class Highway(nn.Module):
    def __init__(self, width: int, bias: float):
        super().__init__()
        self.H, self.T = nn.Linear(width, width), nn.Linear(width, width)
        with torch.no_grad():
            self.T.bias.fill_(bias)

    def forward(self, x):
        t = torch.sigmoid(self.T(x))
        return torch.tanh(self.H(x)) * t + x * (1 - t), t


class Net(nn.Module):
    def __init__(self, width: int, layers: int, bias: float):
        super().__init__()
        self.inp = nn.Linear(6, width)
        self.layers = nn.ModuleList(Highway(width, bias) for _ in range(layers))
        self.head = nn.Linear(width, 1)

    def forward(self, x):
        h, gates = torch.tanh(self.inp(x)), []
        for layer in self.layers:
            h, t = layer(h)
            gates.append(t)
        return self.head(h), gates


@settings(max_examples=40, deadline=None)
@given(bias=st.sampled_from([-13.0, -9.0, -3.0, -1.0, 0.0, 9.0, 13.0]),
       layers=st.integers(1, 3), width=st.integers(2, 12),
       scale=st.sampled_from([0.1, 1.0]), bce=st.booleans(), seed=st.integers(0, 2**16))
def test_saturated_gates_are_named(bias, layers, width, scale, bce, seed):
    torch.manual_seed(seed)
    model = Net(width, layers, bias)
    x, y = torch.randn(32, 6) * scale, torch.randn(32, 1)
    with gradarg.watch(model) as w:
        out, gates = model(x)
        if bce:  # a confident output sigmoid: saturated, but not a gate
            p = torch.sigmoid(out * 1e3)
            loss = nn.functional.binary_cross_entropy(p, (y > 0).float())
        else:
            loss = nn.functional.mse_loss(out, y)
        loss.backward()
    # the truth, from torch: the gates' largest derivative p (1 - p)
    slopes = [float((t * (1 - t)).detach().max()) for t in gates]
    flat = [s for s in slopes if s <= 1e-4]
    text = w.summary(checks=False)
    assert (SAID in text) == bool(flat), (bias, slopes, text)
    if flat:
        assert f"{len(flat)} of the {len(gates)} {SAID}" in text, text
        assert f"at most {max(flat):.1g} there" in text, (flat, text)
