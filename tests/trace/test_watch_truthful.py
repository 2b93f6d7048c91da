"""watch's summary says "ok" only for what it checked: frozen parameters, gradients edited
after backward (clipping, scaling), dead units counted along the right axis."""

from __future__ import annotations

import re

import pytest
import torch
from torch import nn

import gradarg


def mlp():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(8, 16), nn.Tanh(), nn.Linear(16, 16), nn.Tanh(),
                         nn.Linear(16, 1))


def step(net, x=None):
    x = torch.randn(32, 8) if x is None else x
    return net(x).pow(2).mean()


def test_a_healthy_step_is_ok_and_lists_its_checks():
    net = mlp()
    with gradarg.watch(net) as w:
        step(net).backward()
    s = w.summary()
    assert s.startswith("gradients ok: every parameter got")
    ran, _, skipped = s.partition("; not checked: ")
    assert "[checked:" in ran and "edited after backward" in ran
    # no optimizer step in the block: what an optimizer holds and reads is said unchecked
    assert skipped.startswith("what the optimizer holds (no optimizer step or zero_grad was seen)")
    assert "edited after backward" not in skipped
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    with gradarg.watch(net) as w:
        opt.zero_grad()
        step(net).backward()
        opt.step()
    s = w.summary()
    assert s.startswith("gradients ok: every parameter got") and "not checked" not in s
    assert "read at 1 optimizer step(s)" in s


def test_inside_the_block_the_final_grad_is_not_checked_and_says_so():
    net = mlp()
    with gradarg.watch(net) as w:
        step(net).backward()
        inside = w.summary()
    skipped = inside.partition("; not checked: ")[2]
    assert "edited after backward (the with block has not ended" in skipped


def test_frozen_parameters_are_named_not_called_ok_for_every_parameter():
    net = mlp()
    for p in list(net.parameters())[:4]:
        p.requires_grad_(False)
    with gradarg.watch(net) as w:
        step(net).backward()
    s = w.summary()
    assert "every parameter got" not in s
    assert "4 of 6 parameters are frozen" in s and "0.weight" in s


def test_clipping_inside_the_block_is_reported_with_its_factor():
    net = mlp()
    with gradarg.watch(net) as w:
        step(net).backward()
        total = torch.nn.utils.clip_grad_norm_(net.parameters(), 1e-5)
    s = w.summary()
    assert not s.startswith("gradients ok")
    factor = float(re.search(r"is (\S+) times what backward computed", s).group(1))
    # clip_grad_norm_ scales by max_norm / (total norm + 1e-6), computed here independently
    assert abs(factor - 1e-5 / (float(total) + 1e-6)) <= 5e-3 * factor  # printed to 3 digits
    r = w.parameters["0.weight"]
    assert r.final is not None and abs(r.final - float(net[0].weight.grad.norm())) <= 1e-6 * r.final


def test_zero_grad_inside_the_block_is_not_mistaken_for_an_edit():
    net = mlp()
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    with gradarg.watch(net) as w:
        step(net).backward()
        opt.step()
        opt.zero_grad()
    s = w.summary()
    assert s.startswith("gradients ok")
    # the optimizer step saw .grad as backward left it: the comparison ran there
    assert "not checked" not in s and "edited after backward," in s
    # an update by hand (no optimizer step to observe), then zero_grad: nothing to compare
    with gradarg.watch(net) as w:
        step(net).backward()
        with torch.no_grad():
            for p in net.parameters():
                p -= 0.1 * p.grad
        net.zero_grad()
    s = w.summary()
    assert s.startswith("gradients ok")
    assert "edited after backward (.grad was cleared" in s.partition("; not checked: ")[2]


def test_dead_units_on_batch_sequence_feature_input_are_features():
    torch.manual_seed(0)
    net = nn.Sequential(nn.Linear(24, 64), nn.ReLU(), nn.Linear(64, 1))
    with torch.no_grad():
        net[0].bias[:40] = -100.0
    x = torch.randn(8, 20, 24)
    with gradarg.watch(net) as w:
        net(x).sum().backward()
    dead = int((net[1](net[0](x)) == 0).reshape(-1, 64).all(dim=0).sum())  # by hand
    assert dead >= 40
    rec = next(c for c in w.modules if c.name == "1")
    assert rec.dead_units == (dead, 64)
    assert f"{dead} of 64 units (features, the last dimension)" in w.summary()


def test_dead_units_after_a_convolution_are_channels():
    torch.manual_seed(0)
    net = nn.Sequential(nn.Conv2d(3, 6, 3), nn.ReLU(), nn.Flatten(), nn.Linear(6 * 6 * 6, 1))
    with torch.no_grad():
        net[0].bias[:4] = -100.0
    with gradarg.watch(net) as w:
        net(torch.randn(4, 3, 8, 8)).sum().backward()
    rec = next(c for c in w.modules if c.name == "1")
    assert rec.dead_units == (4, 6) and rec.unit_axis == "channels, dimension 1"


def test_after_a_backward_that_raised_the_in_place_edit_is_still_named():
    torch.manual_seed(0)
    lin = nn.Linear(4, 4)
    h = torch.tanh(lin(torch.randn(2, 4)))
    h.clamp_(max=0.5)  # tanh saved its output for backward; this edits it
    loss = h.sum()
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        loss.backward()
    d = gradarg.why_no_grad(loss, lin.weight)
    assert d.case == "modified-in-place" and "TanhBackward0" in d.message
    assert "zero_grad" not in d.message and "inputs=" not in d.message


class PartlyUnderNoGrad(nn.Module):
    def __init__(self):
        super().__init__()
        self.att = nn.Linear(8, 8)
        self.head = nn.Linear(8, 1)

    def forward(self, x):
        with torch.no_grad():  # the bug: att is trained by nobody
            a = self.att(x)
        return self.head(x + a)


def test_a_module_run_under_no_grad_is_named_with_the_cause_the_grad_mode_shows():
    torch.manual_seed(0)
    net = PartlyUnderNoGrad()
    with gradarg.watch(net) as w:
        net(torch.randn(4, 8)).pow(2).mean().backward()
    s = w.summary()
    assert "module 'att' (Linear) produced an output without autograd history" in s
    assert "gradients disabled (torch.no_grad()" in s
    assert "'head'" not in s.split("[checked")[0]  # the head is fine


def test_a_detached_output_is_not_blamed_on_no_grad():
    class Detached(PartlyUnderNoGrad):
        def forward(self, x):
            return self.head(x + self.att(x).detach())

    torch.manual_seed(0)
    net = Detached()
    with gradarg.watch(net) as w:
        net(torch.randn(4, 8)).pow(2).mean().backward()
    s = w.summary()
    assert "no_grad" not in s.split("[checked")[0]
