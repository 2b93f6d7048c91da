""""ok" is a checked claim about what the optimizer reads (issue 43), tested over generated steps.

Each example builds a small random MLP and a training step with some of what goes wrong in
real ones: an optimizer that holds only some layers, a layer's output detached, a NaN in the
data or in a weight, ``zero_grad`` between the backward and the step, no step at all, a
gain kept outside the model (a plain list), an exception that ends the block.  What the
optimizer read is recorded by a step pre-hook of the test's own (plain torch, nothing of
gradarg), and the invariant is checked against it:

- the summary starts with "gradients ok" only if every parameter the optimizer holds had a ``.grad``
  that was present, finite and nonzero when each step read it (no step: ``.grad`` at the end
  of the block), no exception ended the block, and no tensor outside the model fed the
  forward; and it then says what it checked, or that no optimizer step was seen;
- parameters of the model that no optimizer holds are named whenever "ok" is said;
- when everything above holds, the summary does say "ok" (the check is not a blanket "no");
- an "ok" is "gradients ok" and says on the same line what a watch cannot see: whether the
  loss computes what was meant (a formula bug leaves every gradient finite and nonzero).
"""

from __future__ import annotations

import itertools
import math

import pytest
import torch
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from torch import nn

import gradarg

UNSEEN = "not seen by a watch: whether the loss computes what you meant"


class Net(nn.Module):
    def __init__(self, widths: list[int], detach_at: int | None, gain: bool):
        super().__init__()
        self.layers = nn.ModuleList(nn.Linear(a, b) for a, b in itertools.pairwise(widths))
        self.detach_at = detach_at
        self.gains = [nn.Parameter(torch.full((widths[-1],), 1.5))] if gain else []

    def forward(self, x):
        for i, layer in enumerate(self.layers):
            x = torch.tanh(layer(x))
            if i == self.detach_at:
                x = x.detach()
        for g in self.gains:
            x = x * g
        return x


setups = st.fixed_dictionaries({
    "widths": st.lists(st.integers(2, 5), min_size=2, max_size=4),
    "held": st.lists(st.booleans(), min_size=3, max_size=3),  # per layer (first 3)
    "detach": st.booleans(),
    "nan": st.sampled_from([None, "input", "weight"]),
    "zero_between": st.booleans(),
    "step": st.booleans(),
    "gain": st.booleans(),
    "raise_end": st.booleans(),
    "seed": st.integers(0, 2**16),
})


def run(setup):
    torch.manual_seed(setup["seed"])
    widths = setup["widths"]
    n = len(widths) - 1
    detach_at = (setup["seed"] % n if n > 1 else None) if setup["detach"] else None
    if detach_at is not None and detach_at == n - 1:
        detach_at = None  # a detached output of the last layer leaves no graph at all
    net = Net(widths, detach_at, setup["gain"])
    held = [i for i in range(n) if setup["held"][i % 3]] or [n - 1]
    params = [p for i in held for p in net.layers[i].parameters()]
    opt = torch.optim.SGD(params, lr=0.1)
    x = torch.randn(6, widths[0])
    if setup["nan"] == "input":
        x[0, 0] = float("nan")
    elif setup["nan"] == "weight":
        with torch.no_grad():
            net.layers[setup["seed"] % n].weight[0, 0] = float("nan")
    read: list[dict[torch.Tensor, torch.Tensor | None]] = []

    def seen(optimizer, args, kwargs):  # what the step reads, recorded with torch alone
        read.append({p: (None if p.grad is None else p.grad.detach().clone())
                     for g in optimizer.param_groups for p in g["params"]})

    handle = opt.register_step_pre_hook(seen)
    ended = None
    try:
        with gradarg.watch(net) as w:
            opt.zero_grad()
            net(x).pow(2).mean().backward()
            if setup["zero_between"]:
                opt.zero_grad()
            if setup["step"]:
                opt.step()
            if setup["raise_end"]:
                raise ValueError("the user's own error")
    except ValueError as error:
        ended = error
    finally:
        handle.remove()
    final = {p: (None if p.grad is None else p.grad.detach().clone())
             for p in net.parameters()}
    return net, w, read, final, ended, params


def fine(g: torch.Tensor | None) -> bool:
    return g is not None and bool(torch.isfinite(g).all()) and bool((g != 0).any())


BASE = {"widths": [3, 4, 2], "held": [True, True, True], "detach": False, "nan": None,
          "zero_between": False, "step": True, "gain": False, "raise_end": False, "seed": 1}


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(setups)
# each way to go wrong at least once, on top of the random draws
@example({**BASE, "zero_between": True})
@example({**BASE, "gain": True})
@example({**BASE, "raise_end": True})
@example({**BASE, "nan": "weight"})
@example({**BASE, "held": [True, False, True]})
@example({**BASE, "detach": True, "widths": [3, 4, 4, 2]})
@example(BASE)
def test_ok_only_when_what_the_optimizer_reads_is_fine(setup):
    net, w, read, final, ended, params = run(setup)
    s = w.summary(checks=False)
    model_params = list(net.parameters())
    if read:
        held_ok = all(fine(g) for r in read for p, g in r.items() if p.requires_grad)
    else:
        held_ok = all(fine(final[p]) for p in model_params)
    unheld = [name for name, p in net.named_parameters()
              if not any(p is q for q in params)]
    outside_ok = not net.gains or (read and any(
        any(g is q for q in params) for g in net.gains))
    truly_ok = held_ok and ended is None and outside_ok
    if s.startswith("gradients ok"):
        assert truly_ok, (setup, s)
        # scoped to what it checked: the line says what a watch cannot see, in both forms
        for line in (s, w.summary()):
            assert UNSEEN in line, line
        if read:
            assert f"read at {len(read)} optimizer step(s)" in w.summary()
            for name in unheld[:3]:
                assert name in s, (setup, name, s)
        else:
            assert "no optimizer step seen" in s, s
    # the converse on the steps where nothing is wrong at all: ok is said, not withheld
    if read:
        all_fine = all(fine(g) for r in read for g in r.values())
    else:
        all_fine = all(fine(final[p]) for p in model_params)
    if truly_ok and all_fine and not unheld and setup["nan"] is None and not setup["detach"]:
        assert s.startswith("gradients ok"), (setup, s)


def test_an_exception_that_ended_the_block_is_named_with_where_and_no_ok():
    torch.manual_seed(0)
    net = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    def buggy():
        with gradarg.watch(net) as w:
            net(torch.randn(5, 3)).pow(2).mean().backward()
            opt.step()
            buggy.w = w
            {}["missing"]  # the user's own bug, after a healthy step

    with pytest.raises(KeyError):
        buggy()
    w = buggy.w
    s = w.summary(checks=False)
    assert not s.startswith("gradients ok")
    assert "ended with an exception: KeyError" in s
    assert "test_watch_ok_invariant.py" in s  # where: the user's line


def test_no_parameters_no_ok():
    relu = nn.ReLU()
    x = torch.randn(4, requires_grad=True)
    with gradarg.watch(relu) as w:
        relu(x).sum().backward()
    s = w.summary(checks=False)
    assert not s.startswith("gradients ok"), s
    assert "no parameters" in s


def test_clip_after_the_step_is_named_and_its_factor_is_right():
    torch.manual_seed(0)
    net = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1))
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    x, y = torch.randn(16, 4), 10 * torch.randn(16, 1)
    with gradarg.watch(net) as w:
        opt.zero_grad()
        ((net(x) - y) ** 2).mean().backward()
        before = math.sqrt(sum(float(p.grad.norm()) ** 2 for p in net.parameters()))
        opt.step()
        nn.utils.clip_grad_norm_(net.parameters(), max_norm=0.1)
    s = w.summary(checks=False)
    assert not s.startswith("gradients ok")
    assert "clip_grad_norm_ after optimizer.step()" in s
    factor = float(s.split(" times what the step read")[0].rsplit(" ", 1)[1])
    assert abs(factor - 0.1 / (before + 1e-6)) <= 5e-3 * factor


def test_a_frozen_layer_an_optimizer_still_moves_is_named():
    torch.manual_seed(0)
    net = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1))
    opt = torch.optim.SGD(net.parameters(), lr=0.1, momentum=0.9)
    x = torch.randn(16, 4)
    net(x).pow(2).mean().backward()
    opt.step()
    net[0].weight.requires_grad_(False)
    with gradarg.watch(net) as w:
        opt.zero_grad(set_to_none=False)
        net(x).pow(2).mean().backward()
        opt.step()
    s = w.summary(checks=False)
    assert not s.startswith("gradients ok")
    assert "still moved" in s and "0.weight" in s and "momentum" in s
    # the control: set_to_none (the default) leaves the frozen weight alone
    w0 = net[0].weight.detach().clone()
    with gradarg.watch(net) as w:
        opt.zero_grad()
        net(x).pow(2).mean().backward()
        opt.step()
    assert torch.equal(net[0].weight.detach(), w0)
    assert "still moved" not in w.summary(checks=False)
