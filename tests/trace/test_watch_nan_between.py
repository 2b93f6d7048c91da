"""Class: a NaN/Inf gradient made by an operation of a module's own ``forward``, outside every
submodule (``atan2`` of two near-zero outputs, ``sqrt`` or ``log`` at 0, a division by a
near-zero output), is located there: the summary names that module as the first to send
NaN/Inf and the operation among its own operations.

The truth comes from torch alone: a tensor hook of the test on the body's output records the
gradient arriving there, and one on the model's output the gradient leaving the loss.
Generated: the operation, the input scale (near zero or ordinary), the widths, the dtype.
"""

from __future__ import annotations

import torch
from hypothesis import example, given, settings
from hypothesis import strategies as st
from torch import nn

import gradarg

OPS = {  # op on the body's (batch, 2) output -> (batch,), its autograd node
    "atan2": (lambda h: torch.atan2(h[:, 1], h[:, 0]), "Atan2Backward0"),
    "sqrt": (lambda h: torch.sqrt(h.abs()).sum(1), "SqrtBackward0"),
    "log": (lambda h: torch.log(h.abs()).sum(1), "LogBackward0"),
    "divide": (lambda h: h[:, 1] / h[:, 0], "DivBackward0"),
}


class Net(nn.Module):
    def __init__(self, width: int, op: str):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(3, width, bias=False), nn.Tanh(),
                                  nn.Linear(width, 2, bias=False))
        self.op = OPS[op][0]
        self.seen: dict[str, torch.Tensor] = {}

    def forward(self, x):
        h = self.body(x)
        h.register_hook(lambda g: self.seen.__setitem__("body", g))
        out = self.op(h)
        out.register_hook(lambda g: self.seen.__setitem__("out", g))
        return out


@settings(max_examples=40, deadline=None)
@given(op=st.sampled_from(sorted(OPS)), scale=st.sampled_from([0.0, 1e-20, 1e-12, 1.0]),
       width=st.integers(2, 6), dtype=st.sampled_from([torch.float32, torch.float64]),
       seed=st.integers(0, 2**16))
@example(op="atan2", scale=1e-20, width=3, dtype=torch.float32, seed=0)  # overflows
@example(op="sqrt", scale=0.0, width=3, dtype=torch.float64, seed=0)  # infinite at 0
def test_a_nonfinite_gradient_made_between_two_calls_is_located_there(op, scale, width,
                                                                      dtype, seed):
    torch.manual_seed(seed)
    net = Net(width, op).to(dtype)
    x = torch.randn(8, 3, dtype=dtype)
    x[4:] *= scale  # half the batch near zero (or exactly zero, or ordinary)
    with gradarg.watch(net) as w:
        y = net(x)
        loss = y.clamp(-10, 10).mean()
        loss.backward()
    body, out = net.seen["body"], net.seen["out"]
    truth = bool(torch.isfinite(out).all()) and not bool(torch.isfinite(body).all())
    text = w.summary(checks=False)
    if not bool(torch.isfinite(y).all()):  # 0/0 in the forward: said of the forward
        assert "forward pass already made NaN/Inf in module '(model)'" in text, text
    elif truth:
        assert "first sent by '(model)'" in text and OPS[op][1] in text, (op, scale, text)
        assert "'body'" not in text.split("first sent by")[1].split(";")[0], text
    else:
        assert "first sent by '(model)'" not in text, (op, scale, text)
