"""Invariant: the watch says a backward pass "stopped with an error" only when a ``backward()``
of the block raised.  A graph kept alive after a completed backward (``create_graph=True`` for a
loss on input derivatives, ``retain_graph=True``) holds tensors that the optimizer's step then
modifies in place; reading their version counters afterwards must not turn a parameter that got
no gradient for another reason (an output bias no derivative sees, an unused parameter) into a
backward that "stopped".  A real in-place error (the step between forward and backward) is still
named.

The truth comes from torch alone: whether ``backward()`` raised, and which ``.grad`` is None.
Generated: widths, depth, the optimizer, how the graph is kept, the reason for the missing grad.
"""

from __future__ import annotations

import re

import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn

import gradarg

CLAIM = re.compile(r"stopped with an error|backward\(\) call in the block raised")


class Energy(nn.Module):
    """A scalar energy of (q, p), and a parameter the loss never reads."""

    def __init__(self, width: int, depth: int):
        super().__init__()
        layers: list[nn.Module] = [nn.Linear(2, width), nn.Tanh()]
        for _ in range(depth - 1):
            layers += [nn.Linear(width, width), nn.Tanh()]
        self.net = nn.Sequential(*layers, nn.Linear(width, 1))
        self.unused = nn.Parameter(torch.ones(3))

    def forward(self, x):
        return self.net(x)


@settings(max_examples=20, deadline=None)
@given(width=st.integers(2, 12), depth=st.integers(1, 3), adam=st.booleans(),
       kept=st.sampled_from(["create_graph", "retain_graph"]),
       step_first=st.booleans(), seed=st.integers(0, 2**16))
def test_a_stop_is_claimed_only_when_backward_raised(width, depth, adam, kept, step_first,
                                                       seed):
    torch.manual_seed(seed)
    model = Energy(width, depth)
    opt = (torch.optim.Adam if adam else torch.optim.SGD)(model.parameters(), lr=1e-2)
    x, target = torch.randn(16, 2), torch.randn(16, 2)
    error = None
    with gradarg.watch(model) as w:
        opt.zero_grad()
        xx = x.clone().requires_grad_(True)
        energy = model(xx)
        if kept == "create_graph":  # a loss on the time derivatives of a Hamiltonian network
            d, = torch.autograd.grad(energy.sum(), xx, create_graph=True)
            loss = ((torch.stack([d[:, 1], -d[:, 0]], 1) - target) ** 2).mean()
        else:
            loss = ((energy - target[:, :1]) ** 2).mean()
        try:
            if step_first:  # the real in-place error: the step changes saved weights
                (loss * 0).backward(retain_graph=True)
                opt.step()
            loss.backward(retain_graph=kept == "retain_graph")
        except RuntimeError as e:
            error = e
        if error is None:
            opt.step()
    # the truth, from torch: whether backward raised, and which .grad is None
    assert (error is not None) == step_first
    if error is not None:
        assert "modified by an inplace operation" in str(error)
    assert model.unused.grad is None
    text = w.summary(checks=False) + "\n" + w.why_no_grad("unused")
    assert bool(CLAIM.search(text)) == (error is not None), text
