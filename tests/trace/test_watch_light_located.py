"""A NaN/Inf made in the forward on a light step (``watch``'s default ``full_steps=3``: steps
after the third are light while healthy) is located at the module that made it, from the
light notes of ``trace/watching/sentinel.py``, as a full step locates it; and an "ok" after
light steps claims only what those steps checked.

The ground truth is plain torch: the model's modules run one by one without any watch, and
the first module (in forward order) whose output holds NaN/Inf while its input is finite is
the one the finding must name.  The same step recorded in full (``full_steps=None``) must name
the same module in the same words.
"""

from __future__ import annotations

import math

import pytest
import torch
from hypothesis import assume, example, given, settings
from hypothesis import strategies as st

import gradarg

MODULE_CHECKS = ("cut from the graph", "outputs used", "vanishing/exploding", "dead units")


class Sqrt(torch.nn.Module):
    """``sqrt(x - shift)``: NaN for the entries below ``shift`` (a Python float, so no value
    without history enters the graph: the NaN is made by the module's own operation)."""

    def __init__(self):
        super().__init__()
        self.shift = -100.0  # harmless until set

    def forward(self, x):
        return torch.sqrt(x - self.shift)


class Scale(torch.nn.Module):
    """``x * gain``, ``gain`` a buffer (no history): set to NaN, the module reads NaN from a
    value without history."""

    def __init__(self, width):
        super().__init__()
        self.register_buffer("gain", torch.ones(width))

    def forward(self, x):
        return x * self.gain


def _layers(kinds: list[str], width: int) -> list[torch.nn.Module]:
    make = {"linear": lambda: torch.nn.Linear(width, width), "tanh": torch.nn.Tanh,
            "relu": torch.nn.ReLU, "sigmoid": torch.nn.Sigmoid}
    return [make[k]() for k in kinds]


def _build(kinds: list[str], at: int, nest: bool, plant: str, width: int = 6):
    """A Sequential of ``kinds`` with the planted module inserted at ``at``; ``nest``: the
    planted module and the layer before it inside a Sequential of their own."""
    layers = _layers(kinds, width)
    planted = Sqrt() if plant == "made" else Scale(width)
    layers.insert(at, planted)
    if nest and at > 0:
        layers[at - 1:at + 1] = [torch.nn.Sequential(layers[at - 1], planted)]
    net = torch.nn.Sequential(*layers, torch.nn.Linear(width, 1))
    return net, planted


def _arm(planted: torch.nn.Module, on: bool) -> None:
    if isinstance(planted, Sqrt):
        planted.shift = 1e3 if on else -100.0  # every entry below: NaN
    else:
        planted.gain.fill_(math.nan if on else 1.0)


def _truth(net: torch.nn.Module, x: torch.Tensor) -> str:
    """The name of the first module, in forward order, whose output is not finite while its
    input is, innermost first: plain torch, each leaf module's forward run by hand."""
    names = {m: n for n, m in net.named_modules()}
    found = []

    def run(module, h):
        children = list(module.children())
        if isinstance(module, torch.nn.Sequential):
            for c in children:
                h = run(c, h)
            return h
        out = module(h)
        if torch.isfinite(h).all() and not torch.isfinite(out).all() and not found:
            found.append(names[module])
        return out

    with torch.no_grad():
        run(net, x)
    return found[0]


def _where(summary: str) -> str:
    """The finding's location: 'module '<name>' (<Kind>), whose input is finite ...' or the
    'met NaN/Inf in an input of module ...' phrase, up to the parameters it names."""
    head = summary.split(" [checked: ")[0]
    return head.split(": the forward pass ", 1)[1].split("; the model's output")[0]


def _run(kinds, at, nest, plant, step, full_steps):
    torch.manual_seed(0)
    net, planted = _build(kinds, at, nest, plant)
    opt = torch.optim.SGD(net.parameters(), lr=0.0)  # the same weights at every step
    x = torch.randn(8, 6)
    with gradarg.watch(net, full_steps=full_steps) as w:
        for s in range(1, step + 1):
            _arm(planted, s == step)
            if s == step:
                truth = _truth(net, x)
            opt.zero_grad(set_to_none=True)
            net(x).pow(2).mean().backward()
            if s == step:
                full = w.detail.full
                text = w.summary()
            opt.step()
    return net, planted, truth, full, text


plants = st.fixed_dictionaries({
    "kinds": st.lists(st.sampled_from(["linear", "tanh", "relu", "sigmoid"]), min_size=1,
                      max_size=5),
    "at": st.integers(0, 5),  # capped at the number of layers
    "nest": st.booleans(),
    "plant": st.sampled_from(["made", "input"]),
    "step": st.integers(4, 6),
})


@settings(max_examples=10)
@given(plants)
@example({"kinds": ["linear"], "at": 1, "nest": True, "plant": "input", "step": 4})
@example({"kinds": ["linear", "tanh"], "at": 1, "nest": True, "plant": "input", "step": 4})
@example({"kinds": ["linear", "tanh"], "at": 1, "nest": False, "plant": "input", "step": 4})
def test_a_nan_planted_on_a_light_step_is_located_at_its_module_as_on_a_full_step(p):
    at = min(p["at"], len(p["kinds"]))
    args = (p["kinds"], at, p["nest"], p["plant"], p["step"])
    net, planted, truth, full, light_text = _run(*args, full_steps=3)
    names = {m: n for n, m in net.named_modules()}
    assert truth == names[planted]  # the ground truth names the planted module
    # a step past the first three is light when the ones before it were healthy; a layer
    # that saturates (tanh of sqrt(x + 100): an exactly zero derivative) makes the next full
    assume(not full)
    _, _, _, full_again, full_text = _run(*args, full_steps=None)
    assert full_again
    where = _where(light_text)
    kind = type(planted).__name__
    made = (f"already made NaN/Inf in module '{truth}' ({kind}), whose input is finite "
            f"(checked) and whose output is not")
    taken = f"met NaN/Inf in an input of module '{truth}' ({kind}) that has no history"
    # with a Linear before it, the planted module's input has a history: the graph tells a
    # value without history (the NaN buffer) from an operation, and the values it saved
    # stand in for those freed.  Before any Linear, the data flows without a graph and the
    # values freed since are known to neither record: the same words asked of both
    if "linear" in p["kinds"][:at]:
        assert where.startswith(made if p["plant"] == "made" else taken), where
        assert "located inside the model from the values and the graph of its module calls" \
            in light_text
        assert "not located" not in light_text.split(" [checked: ")[0]
    assert where == _where(full_text)  # the same words as the step recorded in full


class OwnLog(torch.nn.Module):
    """The model's own operation (not a submodule's) makes the NaN."""

    def __init__(self):
        super().__init__()
        self.a, self.b, self.shift = torch.nn.Linear(4, 4), torch.nn.Linear(4, 1), 0.0

    def forward(self, x):
        return self.b(torch.log(self.a(x) + 10.0 - self.shift))


def test_a_nan_made_by_the_model_itself_on_a_light_step_is_not_placed_inside_it():
    torch.manual_seed(0)
    net = OwnLog()
    opt = torch.optim.SGD(net.parameters(), lr=0.0)
    x = torch.randn(8, 4).clamp(-1, 1)
    with torch.no_grad():  # ground truth: 'a' and 'b' make nothing; the log in forward does
        assert torch.isfinite(net.a(x)).all()
        assert not torch.isfinite(torch.log(net.a(x) + 10.0 - 1e3)).all()
    with gradarg.watch(net) as w:
        for s in range(1, 6):
            net.shift = 1e3 if s == 5 else 0.0
            opt.zero_grad(set_to_none=True)
            net(x).pow(2).mean().backward()
        assert not w.detail.full
        head = w.summary().split(" [checked: ")[0]
    assert "'a' (Linear)" not in head and "'b' (Linear)" not in head
    assert "module '(model)' (OwnLog)" in head
    assert "not located inside the model" in head


@settings(max_examples=6)
@given(st.integers(4, 9))
def test_an_ok_after_light_steps_names_only_what_was_checked(steps):
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(), torch.nn.Linear(8, 1))
    opt = torch.optim.SGD(net.parameters(), lr=0.01)
    x = torch.randn(16, 4)
    with gradarg.watch(net) as w:
        for _ in range(steps):
            opt.zero_grad(set_to_none=True)
            net(x).pow(2).mean().backward()
            opt.step()
        assert not w.detail.full
    # plain torch: the step was healthy (every .grad finite and nonzero)
    assert all(torch.isfinite(p.grad).all() and p.grad.abs().sum() > 0
               for p in net.parameters())
    text = w.summary()
    assert text.startswith("gradients ok: ")
    tail = text[text.rindex("[checked: "):]
    ran, _, skipped = tail.partition("; not checked: ")
    for check in MODULE_CHECKS:  # the module calls were not recorded: never claimed
        assert check not in ran
        assert f"{check} (step {steps} was a light step" in skipped
    assert "non-finite (the parameters' gradients and the model's output only)" in ran
    assert "all-zero (the parameters' gradients and the model's output only)" in ran


def test_light_steps_leave_no_hook_behind():
    net = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 1))
    opt = torch.optim.SGD(net.parameters(), lr=0.01)
    x = torch.randn(16, 4)
    with gradarg.watch(net) as w:
        for _ in range(5):
            opt.zero_grad(set_to_none=True)
            net(x).pow(2).mean().backward()
            opt.step()
        assert not w.detail.full
        assert all(m._forward_hooks for m in net)  # the light notes
    for m in net.modules():
        assert not m._forward_hooks and not m._forward_pre_hooks


class Boost(torch.nn.Module):
    """Its input squared (the product saves the input: alive when the model's call returns,
    its finiteness checked), cast to a narrow float, times ``k`` (a Python float): Inf once
    ``k`` is beyond the dtype's range."""

    def __init__(self, dtype):
        super().__init__()
        self.dtype, self.k = dtype, 1.0

    def forward(self, x):
        return (x * x).to(self.dtype) * self.k


class Narrow(torch.nn.Module):
    def __init__(self, dtype):
        super().__init__()
        self.a, self.act, self.boost = torch.nn.Linear(4, 4), torch.nn.ReLU(), Boost(dtype)
        self.b = torch.nn.Linear(4, 1)

    def forward(self, x):
        return self.b(self.boost(self.act(self.a(x))).float())


def _overflow_step(dtype, full_steps):
    torch.manual_seed(0)
    net = Narrow(dtype)
    opt = torch.optim.SGD(net.parameters(), lr=0.0)
    x = torch.randn(8, 4)
    with gradarg.watch(net, full_steps=full_steps) as w:
        for s in range(1, 6):
            net.boost.k = torch.finfo(dtype).max * 4 if s == 5 else 1.0
            opt.zero_grad(set_to_none=True)
            net(x).pow(2).mean().backward()
        full = w.detail.full
        head = w.summary().split(" [checked: ")[0]
    return net, x, full, head


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_an_overflow_on_a_light_step_names_the_dtype(dtype):
    """A float16 / bfloat16 output that overflows to Inf (plain torch shows it) is named
    with its dtype's largest finite value, as on a full step."""
    big = torch.finfo(dtype).max
    net, x, full, head = _overflow_step(dtype, 3)
    with torch.no_grad():  # ground truth: finite into 'boost', Inf out of it
        h = net.act(net.a(x))
        assert torch.isfinite(h).all() and torch.isinf((h * h).to(dtype) * (big * 4)).any()
    assert not full
    assert "made NaN/Inf in module 'boost' (Boost), whose input is finite (checked)" in head
    assert f"(its output is {str(dtype).removeprefix('torch.')}, whose largest finite value " \
           f"is {float(big):g}: an overflow" in head
    _, _, full, in_full = _overflow_step(dtype, None)
    assert full
    assert _where(head) == _where(in_full)
