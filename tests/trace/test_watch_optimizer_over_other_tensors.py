"""Class: "ok" only after checking what the optimizer reads, also when the optimizer whose step
ran holds none of the model's parameters and nothing that requires grad (built over
``model.buffers()``, detached copies, frozen tensors): the parameters that got a gradient and
that no stepping optimizer holds are named; when the optimizer holds them, nothing is said.

The truth comes from torch alone: which tensors the optimizer's groups hold (by identity),
each parameter's ``.grad`` and whether it moved.  Generated: what the optimizer is built over,
the optimizer, the widths, the number of iterations.
"""

from __future__ import annotations

import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn

import gradarg


class WithBuffer(nn.Module):
    def __init__(self, width: int):
        super().__init__()
        self.fc = nn.Linear(3, width)
        self.out = nn.Linear(width, 1)
        self.register_buffer("offset", torch.zeros(1))

    def forward(self, x):
        return self.out(torch.tanh(self.fc(x))) + self.offset


OVER = {
    "buffers": lambda m: list(m.buffers()),
    "detached copies": lambda m: [p.detach().clone() for p in m.parameters()],
    "parameters (control)": lambda m: list(m.parameters()),
    "buffers and parameters (control)": lambda m: [*m.buffers(), *m.parameters()],
}


@settings(max_examples=30, deadline=None)
@given(over=st.sampled_from(sorted(OVER)), adam=st.booleans(), width=st.integers(2, 6),
       steps=st.integers(1, 2), seed=st.integers(0, 2**16))
def test_parameters_no_stepping_optimizer_holds_are_named(over, adam, width, steps, seed):
    torch.manual_seed(seed)
    model = WithBuffer(width)
    opt = (torch.optim.Adam if adam else torch.optim.SGD)(OVER[over](model), lr=0.1)
    x, y = torch.randn(8, 3), torch.randn(8, 1)
    before = {n: p.detach().clone() for n, p in model.named_parameters()}
    with gradarg.watch(model) as w:
        for _ in range(steps):
            opt.zero_grad()
            nn.functional.mse_loss(model(x), y).backward()
            opt.step()
    held = {id(t) for g in opt.param_groups for t in g["params"]}
    left = [n for n, p in model.named_parameters() if id(p) not in held and p.grad is not None]
    for n in left:  # torch's truth: a gradient arrived and the parameter never moved
        assert torch.equal(dict(model.named_parameters())[n].detach(), before[n])
    text = w.summary(checks=False)
    said = "no optimizer whose step ran holds them" in text
    assert said == bool(left), (over, text)
    if left:
        assert all(n in text for n in left[:3]) and not text.startswith("gradients ok"), text
