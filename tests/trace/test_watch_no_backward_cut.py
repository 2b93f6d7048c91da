"""Class: no backward pass reached the model because its forward ran without autograd
(``torch.no_grad()`` or ``torch.inference_mode()``) and the loss was built from a copy of its
output made to require grad: the summary and ``why_no_grad`` say no backward reached the model
and name the grad mode the forward ran in.

The truth comes from torch alone: the parameters' ``.grad`` stays None and the copy's is set.
Generated: the grad mode (and a control that runs the forward with grad on), how the copy is
made, the widths.
"""

from __future__ import annotations

import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn
from torch.nn import functional as F

import gradarg

MODES = {"no_grad": (torch.no_grad, "torch.no_grad()"),
         "inference_mode": (torch.inference_mode, "torch.inference_mode()"),
         "on": (torch.enable_grad, None)}
COPIES = {"clone": lambda t: t.clone().requires_grad_(True),
          "detach": lambda t: t.detach().clone().requires_grad_(True),
          "tensor": lambda t: torch.tensor(t.tolist(), requires_grad=True)}


@settings(max_examples=25, deadline=None)
@given(mode=st.sampled_from(sorted(MODES)), copy=st.sampled_from(sorted(COPIES)),
       width=st.integers(1, 4), seed=st.integers(0, 2**16))
def test_a_forward_without_autograd_is_named_when_no_backward_reached_it(mode, copy, width,
                                                                         seed):
    torch.manual_seed(seed)
    model = nn.Sequential(nn.Linear(5, width), nn.Tanh(), nn.Linear(width, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x, target = torch.randn(4, 5), torch.randn(4, 1)
    context, words = MODES[mode]
    with gradarg.watch(model) as w:
        opt.zero_grad()
        with context():
            out = model(x)
        rebuilt = COPIES[copy](out) if mode != "on" else out
        F.mse_loss(rebuilt, target).backward()
        opt.step()
    truth = all(p.grad is None for p in model.parameters())
    assert truth == (mode != "on")
    text, why = w.summary(checks=False), w.why_no_grad("0.weight")
    if truth:
        assert text.startswith("no backward pass reached the model"), text
        for said in (text, why):
            assert words in said and "without autograd history" in said, said
    else:
        assert text.startswith("gradients ok"), text
