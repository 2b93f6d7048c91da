"""Class: an all-zero gradient made by an operation of a module's own ``forward``, outside
every submodule (``clamp`` of the output, a functional ``relu``, ``round``), is located there:
the summary names the two calls between which the gradient became zero, and the operation.

The truth comes from torch alone: a tensor hook of the test on the head's output records the
gradient arriving there, and one on the model's output the gradient leaving the loss.
Generated: the operation, the head's bias (outputs inside or outside the operation's flat
range), the widths.
"""

from __future__ import annotations

import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn

import gradarg

OPS = {
    "clamp(0, 1)": (lambda t: t.clamp(0, 1), "ClampBackward1"),
    "clamp(min=0)": (lambda t: t.clamp(min=0), "ClampBackward1"),
    "relu": (torch.relu, "ReluBackward0"),
    "hardtanh": (nn.functional.hardtanh, "HardtanhBackward0"),
    "round": (torch.round, "RoundBackward0"),
}


class Net(nn.Module):
    def __init__(self, width: int, op: str, bias: float):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(3, width), nn.Tanh())
        self.head = nn.Linear(width, 1)
        with torch.no_grad():
            self.head.weight.mul_(0.1)
            self.head.bias.fill_(bias)
        self.op = OPS[op][0]
        self.seen: dict[str, torch.Tensor] = {}

    def forward(self, x):
        h = self.head(self.body(x))
        h.register_hook(lambda g: self.seen.__setitem__("head", g))
        out = self.op(h)
        if out.requires_grad:
            out.register_hook(lambda g: self.seen.__setitem__("out", g))
        return out


@settings(max_examples=30, deadline=None)
@given(op=st.sampled_from(sorted(OPS)), bias=st.sampled_from([-5.0, 0.5, 5.0]),
       width=st.integers(2, 6), seed=st.integers(0, 2**16))
def test_a_zero_made_between_two_calls_is_located_exactly_there(op, bias, width, seed):
    torch.manual_seed(seed)
    net = Net(width, op, bias)
    x, y = torch.randn(8, 3), torch.rand(8, 1)
    with gradarg.watch(net) as w:
        loss = ((net(x) - y) ** 2).mean()
        loss.backward()
    head, out = net.seen.get("head"), net.seen.get("out")
    truth = (head is not None and not head.any()
             and out is not None and bool(out.any()))
    text = w.summary(checks=False)
    said = "made it zero" in text
    assert said == truth, (op, bias, text)
    if truth:
        assert OPS[op][1] in text and "'head'" in text, text
