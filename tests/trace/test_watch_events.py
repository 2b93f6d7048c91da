"""What watch observes of each parameter's ``.grad`` (issue 37): the passes that accumulated
into it, what an optimizer step found there, the end of the block, and parameters re-created
by an assignment.  Expected figures are computed here from the tensors themselves, never read
from the record."""

from __future__ import annotations

import re

import pytest
import torch
from torch import nn
from torch.utils.checkpoint import checkpoint

import gradarg


def mlp() -> nn.Sequential:
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(6, 8), nn.Tanh(), nn.Linear(8, 2))


X = torch.randn(5, 6, generator=torch.Generator().manual_seed(1))


def loss_of(net: nn.Module, x: torch.Tensor = X) -> torch.Tensor:
    return net(x).pow(2).mean()


def test_retained_graph_twice_counts_two_passes_and_the_norm_of_their_sum():
    net = mlp()
    with gradarg.watch(net) as w:
        loss = loss_of(net)
        loss.backward(retain_graph=True)
        loss.backward()
    r = w.parameters["0.weight"]
    assert r.passes == 2 and [e.kind for e in r.events] == ["pass", "pass", "end"]
    assert r.grad == pytest.approx(float(net[0].weight.grad.norm()), rel=1e-6)  # the sum
    s = w.summary(checks=False)
    assert s.startswith("2 backward passes accumulated into every parameter (retain_graph")
    assert "2 times one pass" in s and "clip" not in s


def test_two_losses_on_one_graph_are_a_note_not_a_problem():
    net = mlp()
    with gradarg.watch(net) as w:
        out = net(X)
        out.pow(2).mean().backward(retain_graph=True)
        out.abs().mean().backward()
    s = w.summary(checks=False)
    assert s.startswith("gradients ok") and "holds the sum of 2 backward passes" in s
    assert "times one pass" not in s


def test_zeroed_between_backward_and_step():
    net = mlp()
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    with gradarg.watch(net) as w:
        loss_of(net).backward()
        opt.zero_grad(set_to_none=False)
        opt.step()
    s = w.summary(checks=False)
    assert ".grad was zeroed after backward and before the optimizer step for every " \
           "parameter" in s
    step = [e for e in w.parameters["2.weight"].events if e.kind == "step"]
    assert len(step) == 1 and step[0].held == 0.0 and step[0].measured
    assert "zeroed after that backward" in w.why_no_grad("2.weight")


def test_clipping_names_the_total_norm_clip_grad_norm_returned():
    net = mlp()
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    with gradarg.watch(net) as w:
        loss_of(net).backward()
        total = float(nn.utils.clip_grad_norm_(net.parameters(), 1e-3))
        opt.step()
        opt.zero_grad()  # after the step: the step's reading is the one compared
    s = w.summary(checks=False)
    factor = float(re.search(r"is (\S+) times what backward computed", s).group(1))
    assert factor == pytest.approx(1e-3 / (total + 1e-6), rel=5e-3)
    stated = float(re.search(r"total norm (\S+),", s).group(1))
    assert stated == pytest.approx(total, rel=5e-3)
    assert "before the optimizer step" in s


def test_reset_with_no_update_before_the_block_ends_is_named():
    net = mlp()
    with gradarg.watch(net) as w:
        loss_of(net).backward()
        net.zero_grad()
    s = w.summary(checks=False)
    assert not s.startswith("gradients ok")
    assert ".grad was reset after backward and before the end of the with block" in s


def test_gradients_computed_by_autograd_grad_accumulate_nothing():
    net = mlp()
    with gradarg.watch(net) as w:
        torch.autograd.grad(loss_of(net), list(net.parameters()))
    assert all(p.grad is None for p in net.parameters())
    assert all(r.passes == 0 for r in w.parameters.values())
    assert "no backward pass accumulated into .grad" in w.summary(checks=False)


def test_another_optimizers_step_between_micro_batches_is_not_a_missing_zero_grad():
    torch.manual_seed(0)
    net = nn.Sequential(nn.Linear(6, 8), nn.Tanh(), nn.Linear(8, 1))
    first, second = (torch.optim.SGD(m.parameters(), lr=0.1) for m in (net[0], net[2]))
    with gradarg.watch(net) as w:
        first.zero_grad()
        for half in X.chunk(2):
            second.zero_grad()
            net(half).pow(2).mean().backward()
            second.step()  # steps net[2] only; net[0] accumulates over the two halves
        first.step()
    assert w.parameters["0.weight"].passes == 2 and w.parameters["2.weight"].passes == 1
    s = w.summary(checks=False)
    assert s.startswith("gradients ok") and "zero_grad() is missing" not in s


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(6, 6)

    def forward(self, x):
        return torch.tanh(self.a(x))  # recomputation stops inside this call, at tanh


def test_the_record_resets_after_a_checkpoint_recomputation_stopped_early():
    class Blocks(nn.Module):
        def __init__(self):
            super().__init__()
            torch.manual_seed(0)
            self.block, self.b = Block(), nn.Linear(6, 1)

        def forward(self, x):
            return self.b(checkpoint(self.block, x, use_reentrant=False))

    net = Blocks()
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    calls = []
    for steps in (1, 2):
        with gradarg.watch(net) as w:
            for _ in range(steps):
                opt.zero_grad()
                loss_of(net).backward()
                opt.step()
        calls.append([c.name for c in w.modules])
    assert calls[1] == calls[0]  # the record of two steps holds the last one only
    assert w.backward_passes == 1 and w.parameters["block.a.weight"].passes == 1
    assert w.summary(checks=False).startswith("gradients ok")


class Rebuilds(nn.Module):
    """``head.bias`` is assigned a new parameter by the model's own forward."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.body, self.head = nn.Linear(6, 4), nn.Linear(4, 2)

    def forward(self, x):
        self.head.bias = nn.Parameter(torch.zeros(2))
        return self.head(torch.tanh(self.body(x)))


def test_a_parameter_assigned_in_a_parents_forward_is_named_with_that_forward():
    net = Rebuilds()
    registered = net.head.bias
    with gradarg.watch(net) as w:
        loss = loss_of(net)
        before = w.why_no_grad(registered)
        loss.backward()
    assert net.head.bias is not registered and registered.grad is None
    assert "in the forward of module '(model)' (Rebuilds)" in before
    assert "gets no gradient" in before
    s = w.summary(checks=False)
    assert s.startswith("head.bias was re-created") and "no gradient for" not in s
    got = float(net.head.bias.grad.norm())  # what the new tensor received, by hand
    assert re.search(rf"norm {got:.3g}\b", s)
    now = w.why_no_grad(net.head.bias)  # the tensor the model holds now: no KeyError
    assert now.startswith("this tensor is the model's parameter head.bias now, but not")
    d = gradarg.why_no_grad(loss, registered, module=net)
    assert "re-creates" in d.message and "only parameter of Rebuilds" in d.message
    with pytest.raises(KeyError, match="not a parameter of the watched model"):
        w.why_no_grad(nn.Parameter(torch.zeros(2)))


def test_a_parameter_replaced_between_calls_is_said_to_be_outside_the_forward():
    net = mlp()
    with gradarg.watch(net) as w:
        net[2].weight = nn.Parameter(net[2].weight.detach().clone())
        loss_of(net).backward()
    assert "outside the model's forward" in w.summary(checks=False)


def test_a_parameter_of_another_model_is_not_said_replaced_as_a_fact():
    net, other = mlp(), mlp()
    d = gradarg.why_no_grad(loss_of(net), other[0].weight, module=net)
    # not one of net's parameters: said; that it was replaced only as a condition
    assert "not one of Sequential's parameters now" in d.message
    assert "if it was taken from the model before the forward" in d.message
