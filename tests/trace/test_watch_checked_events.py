"""Events over inferences (issue 43): each observed event the diagnosis now reads, with the
neighbour it must not be confused with.  Expected values come from torch, never from the tool."""

from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F

import gradarg


def mlp(seed=0):
    torch.manual_seed(seed)
    return nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1))


def test_a_gradscaler_that_skips_every_step_is_named_and_one_that_steps_is_not():
    net = mlp()
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    scaler = torch.amp.GradScaler("cpu", init_scale=2.0**16)
    x = torch.randn(16, 4)
    x[0, 0] = float("inf")
    before = net[0].weight.detach().clone()
    with gradarg.watch(net) as w:
        for _ in range(3):
            opt.zero_grad()
            scaler.scale(net(x).pow(2).mean()).backward()
            scaler.step(opt)
            scaler.update()
    assert torch.equal(before, net[0].weight)  # torch: no update ran
    s = w.summary(checks=False)
    assert "GradScaler skipped the optimizer step 3 of 3" in s and not s.startswith("gradients ok")
    x = torch.randn(16, 4)
    with gradarg.watch(net) as w:
        opt.zero_grad()
        scaler.scale(net(x).pow(2).mean()).backward()
        scaler.step(opt)
        scaler.update()
    assert not torch.equal(before, net[0].weight)
    assert "skipped" not in w.summary(checks=False)


def test_a_module_replaced_after_the_optimizer_is_named_even_without_a_step():
    net = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 3))
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    net[2] = nn.Linear(16, 5)
    x, y = torch.randn(8, 8), torch.randint(0, 5, (8,))
    with gradarg.watch(net) as w:
        opt.zero_grad()  # the only sight of the optimizer in the block
        F.cross_entropy(net(x), y).backward()
    assert not any(net[2].weight is p for g in opt.param_groups for p in g["params"])
    s = w.summary(checks=False)
    assert not s.startswith("gradients ok") and "module '2' was replaced after the optimizer" in s
    # the control: the optimizer built after the replacement
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    with gradarg.watch(net) as w:
        opt.zero_grad()
        F.cross_entropy(net(x), y).backward()
        opt.step()
    assert w.summary(checks=False).startswith("gradients ok")


class Gains(nn.Module):
    def __init__(self, registered: bool):
        super().__init__()
        self.lin = nn.Linear(4, 4)
        gains = [nn.Parameter(torch.full((4,), 2.0))]
        self.gains = nn.ParameterList(gains) if registered else gains

    def forward(self, x):
        return self.lin(x) * self.gains[0]


def test_a_gain_in_a_python_list_is_named_where_it_is_kept():
    x = torch.randn(5, 4)
    for registered in (False, True):
        torch.manual_seed(0)
        net = Gains(registered)
        opt = torch.optim.SGD(net.parameters(), lr=0.1)
        with gradarg.watch(net) as w:
            opt.zero_grad()
            net(x).pow(2).sum().backward()
            opt.step()
        s = w.summary(checks=False)
        held = any(net.gains[0] is p for g in opt.param_groups for p in g["params"])
        assert held == registered  # torch: only the ParameterList is optimised
        if registered:
            assert s.startswith("gradients ok"), s
        else:
            assert not s.startswith("gradients ok")
            assert "'gains[0]' of module '(model)' (a Python list: use nn.ParameterList)" in s


def test_an_input_that_requires_grad_is_not_taken_for_an_unregistered_parameter():
    net = mlp()
    x = torch.randn(3, 4, requires_grad=True)
    with gradarg.watch(net) as w:
        net(x).sum().backward()
    assert x.grad is not None
    assert w.summary(checks=False).startswith("gradients ok")


def test_embedding_max_norm_edit_inside_the_forward_is_not_called_an_optimizer_step():
    class Scorer(nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = nn.Embedding(20, 8, max_norm=1.0)
            self.proj = nn.Linear(8, 8)

        def forward(self, idx):
            scores = self.proj(torch.ones(1, 8)) @ self.emb.weight.t()  # saves emb.weight
            return scores.sum() + self.emb(idx).sum()

    torch.manual_seed(0)
    net = Scorer()
    error = None
    try:
        with gradarg.watch(net) as w:
            net(torch.tensor([1, 2, 3])).backward()
    except RuntimeError as e:
        error = e
    assert error is not None and "inplace operation" in str(error)
    s = w.summary(checks=False)
    assert "modified in place inside the forward, by module 'emb' (Embedding)" in s
    assert "call backward() before optimizer.step()" not in s
    assert "ended with an exception: RuntimeError backward() raised" in s


def test_a_dead_unit_claim_needs_support():
    torch.manual_seed(0)
    net = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
    with torch.no_grad():
        net[0].bias[:6] = -100.0  # 6 of 8 units dead for any input
    for batch, fact in ((1, False), (16, True)):
        with gradarg.watch(net) as w:
            net(torch.randn(batch, 4)).sum().backward()
        s = w.summary(checks=False)
        if fact:
            assert "dead units: '1' (ReLU) has 6 of 8 units" in s and "support: 16" in s
        else:
            assert "dead units:" not in s and "seen on this batch only" in s


def test_a_float16_overflow_is_placed_in_its_layer_with_its_dtype():
    torch.manual_seed(0)
    net = nn.Sequential(nn.Linear(8, 8), nn.ReLU(), nn.Linear(8, 1))
    with torch.no_grad():
        net[0].weight.fill_(100.0)
    x = torch.full((2, 8), 100.0)
    with gradarg.watch(net) as w:
        with torch.autocast("cpu", dtype=torch.float16):
            out = net(x)
        out.float().pow(2).mean().backward()
    with torch.autocast("cpu", dtype=torch.float16):
        h = net[0](x)
    assert h.dtype == torch.float16 and bool(torch.isinf(h).all())  # torch: it overflows
    s = w.summary(checks=False)
    assert "made NaN/Inf in module '0' (Linear)" in s
    assert "float16, whose largest finite value is 65504" in s


def test_gan_discriminator_getting_the_generators_loss_is_not_a_missing_zero_grad():
    torch.manual_seed(0)
    g, d = nn.Linear(2, 3), nn.Linear(3, 1)
    gan = nn.ModuleDict({"G": g, "D": d})
    opt_g, opt_d = torch.optim.SGD(g.parameters(), 0.1), torch.optim.SGD(d.parameters(), 0.1)
    z, real = torch.randn(4, 2), torch.randn(4, 3)

    def gan_step(d_steps_again: bool) -> str:
        with gradarg.watch(gan) as w:
            fake = g(z)
            opt_d.zero_grad()
            (d(real).mean() - d(fake.detach()).mean()).backward()
            opt_d.step()
            opt_g.zero_grad()
            d(fake).mean().backward()
            opt_g.step()
            if d_steps_again:
                opt_d.step()
        return w.summary(checks=False)

    s = gan_step(d_steps_again=False)
    assert s.startswith("gradients ok") and "zero_grad() is missing" not in s
    assert "no optimizer step read that sum" in s
    # the neighbour: D's optimizer steps again without zero_grad: it reads the stale sum
    assert "zero_grad() is missing" in gan_step(d_steps_again=True)


def test_an_optimizer_step_between_forward_and_backward_is_named_from_version_counters():
    torch.manual_seed(0)
    g, d = nn.Linear(2, 3), nn.Linear(3, 1)
    gan = nn.ModuleDict({"G": g, "D": d})
    opt_d = torch.optim.SGD(d.parameters(), 0.1)
    z = torch.randn(4, 2)
    error = None
    try:
        with gradarg.watch(gan) as w:
            out = d(torch.tanh(g(z)))
            out.mean().backward(retain_graph=True)
            opt_d.step()  # D's weight changes in place; the graph still needs it
            (-out.mean()).backward()
    except RuntimeError as e:
        error = e
    assert error is not None and "inplace operation" in str(error)  # torch's own check
    s = w.summary(checks=False)
    assert "an optimizer step (SGD) ran before that backward and updated in place" in s
    assert "weight" in s.split("updated in place")[1][:40]
    # the neighbour: an in-place edit of an activation, no optimizer step: none is named
    try:
        with gradarg.watch(gan) as w:
            h = torch.sigmoid(g(z))
            h.mul_(2.0)  # sigmoid saved its output
            d(h).mean().backward()
    except RuntimeError as e:
        error = e
    s = w.summary(checks=False)
    assert "ended with an exception: RuntimeError" in s and "optimizer step" not in s
