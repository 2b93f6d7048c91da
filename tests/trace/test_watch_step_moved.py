"""An optimizer step that changed nothing is named (issue 43, blind scenarios rounds 2 and 3:
bfloat16 weights whose update rounds away, a learning rate a scheduler decayed to 1e-9), tested
over generated steps.

Each example trains a small random MLP for one step, its weights in float32, bfloat16 or
float16, with SGD or Adam at a learning rate from 0 to 0.1, optionally after a scheduler
decayed it.  The ground truth comes from torch alone: every entry of each parameter before
and after the step, over the entries whose ``.grad`` is finite and not negligible (above 1e-6
times the largest).  The invariant: with bfloat16 / float16 weights, a parameter the step
left entirely unchanged over those entries is named (the summary is not "ok": "unchanged",
the dtype and the learning rate); with float32 weights, a step that left most of the
parameters it read unchanged is named with its learning rate (and the scheduler that decayed
it, when it left all of them), while one that moved every parameter names nothing; a learning
rate of 0 is said (the step did nothing: no "ok"); a parameter the step changed everywhere is
never named.
"""

from __future__ import annotations

import itertools

import torch
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from torch import nn

import gradarg

DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}

setups = st.fixed_dictionaries({
    "widths": st.lists(st.integers(2, 12), min_size=2, max_size=4),
    "dtype": st.sampled_from(sorted(DTYPES)),
    "optimizer": st.sampled_from(["sgd", "adam"]),
    "lr": st.sampled_from([0.0, 1e-9, 1e-6, 1e-4, 1e-3, 1e-1]),
    "scheduled": st.booleans(),
    "seed": st.integers(0, 2**16),
})


def mlp(widths: list[int]) -> nn.Sequential:
    layers: list[nn.Module] = []
    for a, b in itertools.pairwise(widths):
        layers += [nn.Linear(a, b), nn.Tanh()]
    return nn.Sequential(*layers[:-1])


def unchanged_fractions(before, after, grads):
    """Per parameter: the fraction of entries with a non-negligible gradient left as they were
    (None: no such entry)."""
    top = max(float(g.abs().float().nan_to_num(0, 0, 0).max()) for g in grads)
    out = []
    for b, a, g in zip(before, after, grads, strict=True):
        mask = g.abs().float().nan_to_num(0, 0, 0) > 1e-6 * top
        out.append(None if not bool(mask.any()) else float((a == b)[mask].float().mean()))
    return out


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(setups)
@example({"widths": [16, 32, 1], "dtype": "bfloat16", "optimizer": "sgd", "lr": 1e-3,
          "scheduled": False, "seed": 0})  # the blind scenario's shape
@example({"widths": [10, 32, 4], "dtype": "float32", "optimizer": "sgd", "lr": 1e-1,
          "scheduled": True, "seed": 1})  # a scheduler stepped per batch: lr 1e-9
@example({"widths": [4, 4, 4], "dtype": "float16", "optimizer": "adam", "lr": 1e-4,
          "scheduled": False, "seed": 1273})  # another finding names the NaN it leaves first
def test_a_step_that_changed_nothing_is_named(setup):
    torch.manual_seed(setup["seed"])
    widths, dtype = setup["widths"], DTYPES[setup["dtype"]]
    net = mlp(widths).to(dtype)
    params = dict(net.named_parameters())
    make = torch.optim.SGD if setup["optimizer"] == "sgd" else torch.optim.Adam
    opt = make(net.parameters(), lr=setup["lr"])
    if setup["scheduled"]:  # eight scheduler steps of x0.1 before the watched one
        sched = torch.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.1)
        for _ in range(8):
            opt.step()
            sched.step()
    x = torch.randn(16, widths[0]).to(dtype)
    y = torch.randn(16, widths[-1])
    with gradarg.watch(net) as w:
        opt.zero_grad()
        nn.functional.mse_loss(net(x).float(), y).backward()
        before = [p.detach().clone() for p in params.values()]
        grads = [p.grad.clone() for p in params.values()]
        opt.step()
    fractions = unchanged_fractions(before, [p.detach() for p in params.values()], grads)
    s = w.summary(checks=False)
    # the names the "unchanged" finding lists (not those of another finding before it: the
    # NaN that float16 Adam leaves in 0.bias, "also 0.bias, 2.weight", is no such claim)
    named = s.split("unchanged although", 1)[1].split("(observed:")[0] \
        if "unchanged although" in s else ""
    read = [(n, f) for n, f in zip(params, fractions, strict=True) if f is not None]
    stuck = [n for n, f in read if f == 1.0]  # every entry as it was: any sample says so
    moved = [n for n, f in read if f == 0.0]  # no entry as it was
    low = dtype is not torch.float32
    if setup["lr"] == 0.0:  # a step that cannot change anything: said, never "ok"
        assert not s.startswith("gradients ok") and "did not move any parameter" in s, s
        assert "learning rate is 0" in s, s
        return
    if (low and stuck) or (not low and read and len(stuck) * 2 > len(read)):
        assert not s.startswith("gradients ok") and "unchanged although" in s, s
        assert "learning rate" in s, s
        for n in stuck if low else []:
            assert n in named or "..." in named, (n, s)
    if low and stuck:
        assert setup["dtype"] in s, s
    if not low and stuck and len(stuck) == len(read) and setup["scheduled"]:
        assert "scheduler" in s, s
    for n in moved:  # a parameter the step changed is never said to be unchanged
        assert f" {n}," not in named and f" {n} " not in named and not named.endswith(n), (n, s)
    if not low and read and len(moved) == len(read):  # float32: every parameter moved
        assert "unchanged although" not in s, s


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(inputs=st.integers(4, 32), outputs=st.integers(1, 3), scale=st.integers(0, 6),
       lr=st.sampled_from([1e-4, 1e-3, 1e-2]), seed=st.integers(0, 2**16))
@example(inputs=16, outputs=1, scale=4, lr=1e-3, seed=0)  # the weight stuck, the bias moved
def test_a_step_that_left_most_entries_unchanged_is_named(inputs, outputs, scale, lr, seed):
    """float32 weights 10**scale times their usual size (their spacing grows with them) and a
    bias near 0: the step can leave the weight, most of the entries, as it was while the bias
    moves (one of two parameters: not most of them).  Truth from torch: the fraction of all
    entries with a gradient that the step left as they were."""
    torch.manual_seed(seed)
    net = nn.Linear(inputs, outputs)
    with torch.no_grad():
        net.weight.mul_(10.0 ** scale)
        net.bias.mul_(1e-3)
    opt = torch.optim.SGD(net.parameters(), lr=lr)
    x, y = torch.randn(8, inputs) / 10.0 ** scale, torch.randn(8, outputs)
    with gradarg.watch(net) as w:
        opt.zero_grad()
        nn.functional.mse_loss(net(x), y).backward()
        before = [p.detach().clone() for p in net.parameters()]
        grads = [p.grad.clone() for p in net.parameters()]
        opt.step()
    after = [p.detach() for p in net.parameters()]
    top = max(float(g.abs().max()) for g in grads)  # entries with a gradient not negligible
    kept = torch.cat([(a == b)[g.abs() > 1e-6 * top]
                      for a, b, g in zip(after, before, grads, strict=True)])
    kept = float(kept.float().mean())
    s = w.summary(checks=False)
    if kept >= 0.9:  # the step did not train the model: said, with the parameters left
        assert not s.startswith("gradients ok") and "unchanged although" in s, (kept, s)
        assert "weight" in s.split("(observed:")[0], s
    if kept <= 0.1:
        assert "unchanged although" not in s, (kept, s)
