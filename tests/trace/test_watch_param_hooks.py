"""A hook of the user's that changes a parameter's gradient is named (issue 43, blind
scenarios round 2), tested over generated steps.

Each example hooks some parameters of a small random MLP (``Tensor.register_hook``) with a
hook that returns zeros, one that scales the gradient, or one that only looks at it
(returns ``None``), registered before the watch began or inside the block (at its first
iteration, or at its last only), then runs one or two iterations with an optimizer among
SGD, SGD with momentum, SGD with weight decay, Adam and AdamW.  The ground truth comes from
torch alone: a hook-free copy of the model gives the gradient backward computes, a step
pre-hook of the test's own the ``.grad`` the step read, and each parameter is read before
and after the last step.  The invariant:

- a hook that replaced a nonzero gradient with zeros is named with the parameter, as the
  cause of its all-zero ``.grad`` (the summary is not "ok"); when the last optimizer step
  still moved such a parameter (weight decay, momentum), the summary and ``why_no_grad``
  say so, and they say it of no parameter the step left where it was;
- a hook that scaled the gradient is named in a note (the summary stays "ok");
- a hook that returned ``None`` (or no hook) is not mentioned.

The same holds for a hook on a tensor of the forward (an activation, hooked inside the
model's forward at each step): one that returned zeros is named as what cut the gradient to
the parameters below it, one that scaled it in a note, one that looked not at all.
"""

from __future__ import annotations

import itertools

import torch
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from torch import nn
from torch.optim.optimizer import register_optimizer_step_pre_hook

import gradarg

OPTIMIZERS = {
    "sgd": lambda ps: torch.optim.SGD(ps, lr=0.1),
    "momentum": lambda ps: torch.optim.SGD(ps, lr=0.1, momentum=0.9),
    "decay": lambda ps: torch.optim.SGD(ps, lr=0.1, weight_decay=0.5),
    "adam": lambda ps: torch.optim.Adam(ps, lr=1e-2),
    "adamw": lambda ps: torch.optim.AdamW(ps, lr=1e-2, weight_decay=0.5),
}
HOOKS = {
    "zero": lambda g: torch.zeros_like(g),
    "scale": lambda g: g * 10,
    "look": lambda g: None,
}

setups = st.fixed_dictionaries({
    "widths": st.lists(st.integers(2, 5), min_size=2, max_size=4),
    "hooked": st.lists(st.booleans(), min_size=6, max_size=6),  # per parameter (first 6)
    "hook": st.sampled_from(sorted(HOOKS)),
    "when": st.sampled_from(["before", "inside", "last"]),
    "optimizer": st.sampled_from(sorted(OPTIMIZERS)),
    "iterations": st.integers(1, 2),
    "seed": st.integers(0, 2**16),
})


def mlp(widths: list[int]) -> nn.Sequential:
    layers: list[nn.Module] = []
    for a, b in itertools.pairwise(widths):
        layers += [nn.Linear(a, b), nn.Tanh()]
    return nn.Sequential(*layers[:-1])


def run(setup):
    torch.manual_seed(setup["seed"])
    widths = setup["widths"]
    net = mlp(widths)
    params = dict(net.named_parameters())
    hooked = [n for i, n in enumerate(params) if setup["hooked"][i % 6]] or [next(iter(params))]
    opt = OPTIMIZERS[setup["optimizer"]](net.parameters())
    data = [(torch.randn(6, widths[0]), torch.randn(6, widths[-1]))
            for _ in range(setup["iterations"])]
    hook = HOOKS[setup["hook"]]

    def put_hooks():
        return [params[n].register_hook(hook) for n in hooked]

    handles = put_hooks() if setup["when"] == "before" else []
    read: list[dict[str, torch.Tensor]] = []
    names = {p: n for n, p in params.items()}
    step_hook = register_optimizer_step_pre_hook(
        lambda o, a, k: read.append({names[p]: p.grad.clone() for g in o.param_groups
                                     for p in g["params"] if p.grad is not None}))
    try:
        with gradarg.watch(net) as w:
            for it, (x, y) in enumerate(data):
                last = it == len(data) - 1
                if (setup["when"] == "inside" and it == 0) or (setup["when"] == "last" and last):
                    handles += put_hooks()
                ref = mlp(widths)  # no hooks: the gradient backward computes
                ref.load_state_dict(net.state_dict())
                raw = dict(zip(params, torch.autograd.grad(
                    nn.functional.mse_loss(ref(x), y), list(ref.parameters())), strict=True))
                opt.zero_grad()
                nn.functional.mse_loss(net(x), y).backward()
                before = {n: p.detach().clone() for n, p in params.items()}
                opt.step()
    finally:
        step_hook.remove()
        for h in handles:
            h.remove()
    moved = {n for n, p in params.items() if not torch.equal(p.detach(), before[n])}
    return w, hooked, raw, read[-1], moved


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(setups)
@example({"widths": [3, 4, 2], "hooked": [True] * 6, "hook": "zero", "when": "before",
          "optimizer": "decay", "iterations": 1, "seed": 0})  # the blind scenario's shape
@example({"widths": [3, 4, 2], "hooked": [True] + [False] * 5, "hook": "zero",
          "when": "last", "optimizer": "momentum", "iterations": 2, "seed": 1})
@example({"widths": [2, 3], "hooked": [False] * 6, "hook": "zero", "when": "last",
          "optimizer": "adam", "iterations": 2, "seed": 0})  # Adam: as many up as down
def test_a_hook_that_changed_a_gradient_is_named(setup):
    w, hooked, raw, read, moved = run(setup)
    kind = setup["hook"]
    # the ground truth, from torch: what the last step read is the hook's output
    for n in hooked:
        want = {"zero": torch.zeros_like(raw[n]), "scale": 10 * raw[n], "look": raw[n]}[kind]
        torch.testing.assert_close(read[n], want, rtol=1e-5, atol=1e-7)
        assert bool((raw[n] != 0).any())  # backward computed a nonzero gradient
    s = w.summary(checks=False)
    if kind == "look":
        assert s.startswith("gradients ok") and "hook" not in s, s
        return
    if kind == "scale":
        assert s.startswith("gradients ok"), s
        assert f"a hook on {hooked[0]}" in s and "changed the gradient" in s and "x 10" in s, s
        return
    assert not s.startswith("gradients ok"), s
    assert "from a hook" in s and "replaced the gradient backward computed with zeros" in s, s
    assert f"{hooked[0]}" in s.split("(Tensor.register_hook)")[0], s
    still = [n for n in hooked if n in moved]
    if still:
        assert "the optimizer step still moved" in s, s
    else:
        assert "still moved" not in s, s
    why = w.why_no_grad(hooked[0])
    assert "a hook registered on it" in why and "with zeros" in why, why
    assert ("still moved" in why) == (hooked[0] in moved), why


def test_the_hooks_of_the_watch_come_off_and_the_users_keep_their_order():
    torch.manual_seed(0)
    net = mlp([3, 2])
    seen: list[str] = []
    first = net[0].weight.register_hook(lambda g: seen.append("a") or g * 2)
    x = torch.randn(4, 3)
    with gradarg.watch(net) as w:
        second = net[0].weight.register_hook(lambda g: seen.append("b") or g * 3)
        net(x).sum().backward()
    assert seen == ["a", "b"]
    torch.testing.assert_close(net[0].weight.grad, 6 * x.sum(0).expand(2, 3))
    assert "x 6" in w.summary()
    hooks = net[0].weight._backward_hooks  # private: read only in this check
    assert list(hooks) == [first.id, second.id]


class Hooked(nn.Module):
    """An MLP whose forward hooks the activation after layer ``at`` with ``hook``."""

    def __init__(self, widths: list[int], at: int, hook):
        super().__init__()
        self.layers = nn.ModuleList(nn.Linear(a, b) for a, b in itertools.pairwise(widths))
        self.at, self.hook = at, hook

    def forward(self, x):
        for i, layer in enumerate(self.layers):
            x = layer(x)
            if i < len(self.layers) - 1:
                x = torch.tanh(x)
            if i == self.at:
                x.register_hook(self.hook)
        return x


activation_setups = st.fixed_dictionaries({
    "widths": st.lists(st.integers(2, 5), min_size=3, max_size=5),
    "hook": st.sampled_from(sorted(HOOKS)),
    "at": st.integers(0, 3),
    "optimizer": st.sampled_from(sorted(OPTIMIZERS)),
    "iterations": st.integers(1, 2),
    "seed": st.integers(0, 2**16),
})


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(activation_setups)
def test_a_hook_on_an_activation_that_changed_its_gradient_is_named(setup):
    torch.manual_seed(setup["seed"])
    widths = setup["widths"]
    at = setup["at"] % (len(widths) - 2)  # an activation between two layers
    net = Hooked(widths, at, HOOKS[setup["hook"]])
    opt = OPTIMIZERS[setup["optimizer"]](net.parameters())
    with gradarg.watch(net) as w:
        for _ in range(setup["iterations"]):
            x, y = torch.randn(6, widths[0]), torch.randn(6, widths[-1])
            opt.zero_grad()
            nn.functional.mse_loss(net(x), y).backward()
            opt.step()
    below = [f"layers.{i}.{k}" for i in range(at + 1) for k in ("weight", "bias")]
    params = dict(net.named_parameters())
    # the ground truth, from torch: the parameters below the hooked activation
    cut = [n for n in below if not params[n].grad.any()]
    assert (cut == below) == (setup["hook"] == "zero")
    s = w.summary(checks=False)
    if setup["hook"] == "look":
        assert s.startswith("gradients ok") and "hook" not in s, s
        return
    if setup["hook"] == "scale":
        assert s.startswith("gradients ok"), s
        assert "a hook on a tensor of the forward" in s and "(x 10)" in s, s
        return
    assert not s.startswith("gradients ok"), s
    assert "a hook on a tensor of the forward" in s, s
    assert "replaced the gradient arriving there with zeros" in s, s
    assert "first became all zero" not in s, s  # not the module after the hook
    why = w.why_no_grad(below[0])
    assert "exactly zero" in why and "a hook on a tensor of the forward" in why, why


class Shared(nn.Module):
    """One ``Linear`` applied ``uses`` times (the same weight feeds several nodes)."""

    def __init__(self, width: int, uses: int):
        super().__init__()
        self.lin, self.uses = nn.Linear(width, width), uses

    def forward(self, x):
        for _ in range(self.uses):
            x = torch.tanh(self.lin(x))
        return x


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(width=st.integers(2, 5), uses=st.integers(1, 3), hook=st.sampled_from(sorted(HOOKS)),
       when=st.sampled_from(["before", "inside"]), seed=st.integers(0, 2**16))
def test_a_hook_on_a_weight_used_several_times_is_read_against_what_its_users_sent(
        width, uses, hook, when, seed):
    # the gradient before the hooks is the sum of what every node using the weight sends it
    # (read with public post hooks on those nodes when the hook predates the watch)
    torch.manual_seed(seed)
    net = Shared(width, uses)
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    x, y = torch.randn(4, width), torch.randn(4, width)
    handles = [net.lin.weight.register_hook(HOOKS[hook])] if when == "before" else []
    try:
        with gradarg.watch(net) as w:
            if when == "inside":
                handles.append(net.lin.weight.register_hook(HOOKS[hook]))
            opt.zero_grad()
            nn.functional.mse_loss(net(x), y).backward()
            opt.step()
    finally:
        for h in handles:
            h.remove()
    s = w.summary(checks=False)
    if hook == "look":
        assert s.startswith("gradients ok") and "hook" not in s, s
    elif hook == "scale":
        assert s.startswith("gradients ok") and "a hook on lin.weight" in s and "x 10" in s, s
    else:
        assert not s.startswith("gradients ok") and "lin.weight" in s, s
        assert "replaced the gradient backward computed with zeros" in s, s
    assert not net.lin.weight._backward_hooks  # private: read only in this check
