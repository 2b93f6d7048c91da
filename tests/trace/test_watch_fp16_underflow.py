"""All-zero gradients that underflowed in float16 are named as such (issue 43, blind
scenarios round 2), tested over generated autocast steps.

Each example runs one step of a small random MLP under ``torch.autocast("cpu")`` to float16,
to bfloat16, or without autocast, with a loss weight from 1e-9 to 1 (small weights leave
gradients below float16's smallest subnormal, about 6e-8, which round to zero), with or
without a ``GradScaler``, and sometimes a hidden layer whose weights are 1e-4 times smaller
(the gradient then underflows inside the model, not at its output).  The ground truth comes
from torch alone: ``.grad`` after the backward, and the same step in float32 on a copy of
the model (``torch.autograd.grad``).  The invariant:

- when a parameter's ``.grad`` is all zero while its float32 gradient is not, under float16
  autocast without a ``GradScaler``, the summary and ``why_no_grad`` of that parameter name a
  possible float16 underflow and the ``GradScaler`` as the remedy;
- "underflow" is never said without float16 on the path (float32, bfloat16), nor when a
  ``GradScaler`` scaled the loss; a step whose gradients are all nonzero says "ok".
"""

from __future__ import annotations

import itertools

import pytest
import torch
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from torch import nn

import gradarg

DTYPES = {"float16": torch.float16, "bfloat16": torch.bfloat16, "float32": None}

setups = st.fixed_dictionaries({
    "widths": st.lists(st.integers(3, 12), min_size=3, max_size=5),
    "dtype": st.sampled_from(sorted(DTYPES)),
    "weight_exp": st.integers(-9, 0),
    "scaler": st.booleans(),
    "tiny_layer": st.booleans(),
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
    if setup["tiny_layer"]:
        with torch.no_grad():
            net[2].weight.mul_(1e-4)  # the second Linear: the gradient through it shrinks
    ref = mlp(widths)
    ref.load_state_dict(net.state_dict())
    x, y = torch.randn(64, widths[0]), torch.randn(64, widths[-1])
    weight = 10.0 ** setup["weight_exp"]
    dtype = DTYPES[setup["dtype"]]
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    scaler = torch.amp.GradScaler("cpu", init_scale=2.0 ** 16) if setup["scaler"] else None
    before = [p.detach().clone() for p in net.parameters()]
    with gradarg.watch(net) as w:
        opt.zero_grad()
        with torch.autocast("cpu", dtype=dtype or torch.bfloat16, enabled=dtype is not None):
            out = net(x)
        loss = weight * nn.functional.mse_loss(out.float(), y)
        if scaler is None:
            loss.backward()
            grads = {n: p.grad.clone() for n, p in net.named_parameters()}
            opt.step()
        else:
            scaler.scale(loss).backward()
            scaler.unscale_(opt)
            grads = {n: p.grad.clone() for n, p in net.named_parameters()}
            scaler.step(opt)
            scaler.update()
    fp32 = dict(zip(grads, torch.autograd.grad(weight * nn.functional.mse_loss(ref(x), y),
                                               list(ref.parameters())), strict=True))
    same = [(b == p.detach())[g != 0] for b, p, g in zip(before, net.parameters(),
                                                         grads.values(), strict=True)]
    kept = float(torch.cat(same).float().mean())  # entries with a gradient the step left
    return w, grads, fp32, out.dtype, kept


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(setups)
@example({"widths": [8, 16, 4], "dtype": "float16", "weight_exp": -5, "scaler": False,
          "tiny_layer": False, "seed": 0})  # the blind scenario's shape
@example({"widths": [8, 16, 16, 4], "dtype": "float16", "weight_exp": -1, "scaler": False,
          "tiny_layer": True, "seed": 3})  # the underflow inside the model
@example({"widths": [8, 16, 4], "dtype": "float16", "weight_exp": -5, "scaler": True,
          "tiny_layer": False, "seed": 0})  # the same with a GradScaler: nothing underflows
@example({"widths": [9, 9, 9], "dtype": "bfloat16", "weight_exp": -6, "scaler": False,
          "tiny_layer": False, "seed": 68})  # 3 of 4 float32 parameters left as they were
def test_float16_underflow_is_named_only_where_float16_was_on_the_path(setup):
    w, grads, fp32, out_dtype, kept = run(setup)
    assert out_dtype == (DTYPES[setup["dtype"]] or torch.float32)
    # the ground truth, from torch: which gradients are all zero here and not in float32
    lost = [n for n, g in grads.items() if not g.any() and fp32[n].any()]
    assert all(fp32[n].any() for n in grads)  # in float32 every gradient is nonzero
    s = w.summary(checks=False)
    if not any(not g.any() for g in grads.values()):
        assert "underflow" not in s, s
        if all(g.all() for g in grads.values()) and not setup["tiny_layer"]:
            if kept <= 0.1:  # (a tiny layer is a vanishing gradient: said so)
                assert s.startswith("gradients ok"), s
            elif kept >= 0.9:  # a loss weighted down to 1e-7: updates below float32 spacing
                assert "unchanged although" in s and "learning rate 0.1" in s, s
        return
    if setup["dtype"] != "float16" or setup["scaler"]:
        assert "underflow" not in s and "underflow" not in w.why_no_grad(lost[0]), s
        return
    assert not s.startswith("gradients ok"), s
    assert "possibly a float16 underflow" in s and "GradScaler" in s, s
    why = w.why_no_grad(lost[0])
    assert "exactly zero" in why and "float16 underflow" in why and "GradScaler" in why, why


@pytest.mark.parametrize("half_model", [False, True])
def test_a_model_in_float16_is_told_to_keep_float32_parameters(half_model):
    torch.manual_seed(0)
    net = mlp([8, 16, 4])
    x, y = torch.randn(64, 8), torch.randn(64, 4)
    if half_model:
        net, x = net.half(), x.half()
    with gradarg.watch(net) as w:
        with torch.autocast("cpu", dtype=torch.float16, enabled=not half_model):
            out = net(x)
        (1e-8 * nn.functional.mse_loss(out.float(), y)).backward()
    assert all(not p.grad.any() for p in net.parameters())
    s = w.summary(checks=False)
    assert "possibly a float16 underflow" in s
    assert ("cannot unscale float16 .grad" in s) == half_model
