"""A module output detached before the next module takes it is observed (issue 43): the next
module's input is the same storage, without history.  An unused output says nothing of a
detach; a detach the modules cannot see (before a functional use) is not claimed."""

from __future__ import annotations

import torch
from torch import nn

import gradarg


class Chain(nn.Module):
    def __init__(self, how: str):
        super().__init__()
        torch.manual_seed(0)
        self.how = how
        self.a, self.act, self.b = nn.Linear(6, 6), nn.Tanh(), nn.Linear(6, 2)
        self.extra = nn.Linear(6, 6)

    def forward(self, x):
        z = self.a(x)
        if self.how == "detach":
            z = z.detach()
        elif self.how == "data":
            z = z.data
        elif self.how == "detach-then-op":
            z = z.detach() * 2.0  # a new tensor: no module sees the detach
        if self.how == "unused":
            self.extra(x)  # computed, never used
        return self.b(self.act(z))


def step(how: str) -> gradarg.GradWatch:
    net = Chain(how)
    with gradarg.watch(net) as w:
        net(torch.randn(5, 6)).pow(2).mean().backward()
    # ground truth from torch: the cut module's parameters got no gradient
    cut = net.extra if how == "unused" else net.a
    assert cut.weight.grad is None and net.b.weight.grad is not None
    return w


def test_a_detach_between_two_modules_is_observed_and_names_both():
    for how in ("detach", "data"):
        w = step(how)
        s = w.summary(checks=False)
        assert "module 'act' (Tanh) took that output without its history" in s, how
        assert "detached between them" in s and "'a'" in s
        assert "uses it" not in s
        assert "detached between them" in w.why_no_grad("a.weight")


def test_an_unused_output_is_not_said_detached():
    s = step("unused").summary(checks=False)
    assert "'extra'" in s and "uses it with its history" in s
    assert "detach" not in s


def test_a_detach_no_module_sees_is_not_claimed():
    s = step("detach-then-op").summary(checks=False)
    assert "'a'" in s and "detached between them" not in s
    assert "uses it with its history" in s
