"""Class: an all-zero gradient made by a module's own operations between two calls inside it
(``fc2(round(fc1(x)))``: fake quantisation without a straight-through estimator).  The summary
names the operation with a zero derivative exactly when the gradient at ``fc1``'s output is
all zero; an operation that passes a gradient (identity, ``relu`` on positive values, the
straight-through ``h + (round(h) - h).detach()``) is never blamed, and an all-zero ``.grad``
is said only of a parameter torch left one in (``fc2.weight`` when every ``round(h)`` is 0).

The truth is torch's own: the gradient of the loss with respect to ``fc1``'s output
(``torch.autograd.grad``) is all zero or not.
"""

from __future__ import annotations

import torch
from hypothesis import example, given, settings
from hypothesis import strategies as st
from torch import nn

import gradarg

OPS = {
    "round": (lambda h: torch.round(h * 4) / 4, "RoundBackward0"),
    "floor": (lambda h: torch.floor(h), "FloorBackward0"),
    "sign": (lambda h: torch.sign(h) * 0.5, "SignBackward0"),
    "straight-through round": (lambda h: h + (torch.round(h) - h).detach(), None),
    "identity": (lambda h: h * 1.0, None),
    "relu of positive": (lambda h: torch.relu(h.abs() + 1), None),
}


class Between(nn.Module):
    def __init__(self, op):
        super().__init__()
        self.fc1, self.fc2, self.op = nn.Linear(5, 7), nn.Linear(7, 2), op

    def forward(self, x):
        self.h = self.fc1(x)
        return self.fc2(self.op(self.h))


@settings(max_examples=30, deadline=None)
@given(op=st.sampled_from(sorted(OPS)), n=st.integers(1, 6), seed=st.integers(0, 999))
@example(op="straight-through round", n=1, seed=31)  # round(h) all 0: fc2.weight's .grad is 0
def test_an_all_zero_gradient_made_between_two_calls_names_the_operation(op, n, seed):
    torch.manual_seed(seed)
    fn, node = OPS[op]
    model = Between(fn)
    x = torch.randn(n, 5)
    with gradarg.watch(model) as w:
        loss = model(x).pow(2).mean()
        (at_h,) = torch.autograd.grad(loss, model.h, retain_graph=True)
        loss.backward()
    zero = not bool(at_h.any())  # torch's own truth
    assert zero == (node is not None), op
    text = w.summary(checks=False)
    if zero:
        assert "fc1.weight" in text and node in text and "zero derivative everywhere" in text, text
    else:  # an all-zero .grad is said only where torch left one (fc2's input all 0)
        assert "zero derivative everywhere" not in text, text
        zeros = [m for m, p in model.named_parameters() if not p.grad.any()]
        assert ("all-zero" in text) == bool(zeros), (zeros, text)
        for m, _ in model.named_parameters():
            assert (m in text.split("all-zero")[-1].split(";")[0]) <= (m in zeros), (m, text)
