"""A ``GradScaler`` used halfway is not "ok" (issue 43, blind scenarios round 2), tested over
generated AMP steps.

Each example runs one or two training iterations with ``torch.amp.GradScaler`` on a small
random MLP: micro-batches whose losses are scaled with ``scaler.scale`` or, at one place, not;
``scaler.step`` (which runs ``unscale_``), or ``unscale_`` then ``optimizer.step()``, or a plain
``optimizer.step()`` that nothing unscaled; an optimizer among SGD, SGD with momentum and
Adam.  The ground truth comes from torch alone: a step pre-hook of the test's own reads the
``.grad`` each step read, and a copy of the model gives each micro-batch's loss gradient with
``torch.autograd.grad``; the read must equal the sum of those gradients, each multiplied by
its factor (its loss scale over what ``unscale_`` divided by).  The invariant:

- the summary starts with "ok" only when every factor of every step read is 1 (the loss's
  scale), and then it names no factor;
- otherwise it says which it was, with the factor: a scaled loss nothing unscaled ("S times
  the loss's gradient"), an ``unscale_`` of a loss that was not scaled ("S times smaller"),
  or passes at different scales ("different scales"); and ``why_no_grad`` of a parameter
  names the factor too.
"""

from __future__ import annotations

import itertools

import pytest
import torch
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from torch import nn
from torch.optim.optimizer import register_optimizer_step_pre_hook

import gradarg

pytestmark = pytest.mark.skipif(not hasattr(torch.amp, "GradScaler"),
                                reason="torch.amp.GradScaler('cpu') needs torch >= 2.3")

OPTIMIZERS = {
    "sgd": lambda ps: torch.optim.SGD(ps, lr=1e-3),
    "momentum": lambda ps: torch.optim.SGD(ps, lr=1e-3, momentum=0.9),
    "adam": lambda ps: torch.optim.Adam(ps, lr=1e-3),
}

setups = st.fixed_dictionaries({
    "widths": st.lists(st.integers(2, 6), min_size=2, max_size=4),
    "optimizer": st.sampled_from(sorted(OPTIMIZERS)),
    "scale_exp": st.integers(3, 16),
    "micro": st.integers(1, 3),
    # how the iteration with the misuse steps: scaler.step, unscale_ then optimizer.step(),
    # or a plain optimizer.step()
    "step": st.sampled_from(["scaler", "unscale", "plain"]),
    "unscaled_at": st.sets(st.integers(0, 2)),  # micro-batches whose loss is not scaled
    "iterations": st.integers(1, 2),
    "bad_first": st.booleans(),  # the misuse in the first iteration (the other done right)
    "seed": st.integers(0, 2**16),
})


def mlp(widths: list[int]) -> nn.Sequential:
    layers: list[nn.Module] = []
    for a, b in itertools.pairwise(widths):
        layers += [nn.Linear(a, b), nn.Tanh()]
    return nn.Sequential(*layers[:-1])


def run(setup):
    torch.manual_seed(setup["seed"])
    widths, micro, scale = setup["widths"], setup["micro"], 2.0 ** setup["scale_exp"]
    net = mlp(widths)
    opt = OPTIMIZERS[setup["optimizer"]](net.parameters())
    scaler = torch.amp.GradScaler("cpu", init_scale=scale)
    scaler.scale(torch.zeros(()))  # the scale made (as by an earlier iteration's scale)
    batches = [[(torch.randn(4, widths[0]), torch.randn(4, widths[-1])) for _ in range(micro)]
               for _ in range(setup["iterations"])]
    bad = 0 if setup["bad_first"] else setup["iterations"] - 1
    read: list[dict[str, torch.Tensor]] = []  # .grad each step read (the test's own hook)
    names = {p: n for n, p in net.named_parameters()}
    handle = register_optimizer_step_pre_hook(
        lambda o, a, k: read.append({names[p]: p.grad.clone() for g in o.param_groups
                                     for p in g["params"] if p.grad is not None}))
    expected: list[dict[str, torch.Tensor]] = []  # what each read must be, from torch alone
    factors: list[list[float]] = []
    try:
        with gradarg.watch(net) as w:
            for it, data in enumerate(batches):
                ref = mlp(widths)  # the parameters this iteration's forward uses
                ref.load_state_dict(net.state_dict())
                unscaled = setup["unscaled_at"] if it == bad else set()
                how = setup["step"] if it == bad else "scaler"
                opt.zero_grad()
                for i, (x, y) in enumerate(data):
                    loss = nn.functional.mse_loss(net(x), y) / micro
                    (loss if i in unscaled else scaler.scale(loss)).backward()
                if how == "scaler":
                    scaler.step(opt)
                    scaler.update()
                elif how == "unscale":
                    scaler.unscale_(opt)
                    opt.step()
                    scaler.update()
                else:
                    opt.step()  # nothing unscaled .grad (no scaler.update: it would raise)
                # each micro-batch's factor: its loss scale, over the unscale_ of the step
                f = [(1.0 if i in unscaled else scale) / (1.0 if how == "plain" else scale)
                     for i in range(micro)]
                factors.append(f)
                grads = [torch.autograd.grad(nn.functional.mse_loss(ref(x), y) / micro,
                                             list(ref.parameters())) for x, y in data]
                expected.append({n: sum(fi * g[k] for fi, g in zip(f, grads, strict=True))
                                 for k, (n, _) in enumerate(ref.named_parameters())})
    finally:
        handle.remove()
    return w, net, read, expected, factors, scale


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(setups)
@example({"widths": [4, 8, 1], "optimizer": "sgd", "scale_exp": 16, "micro": 1,
          "step": "scaler", "unscaled_at": {0}, "iterations": 1, "bad_first": True,
          "seed": 0})  # the blind scenario's shape: loss.backward(), then scaler.step
@example({"widths": [4, 8, 1], "optimizer": "sgd", "scale_exp": 10, "micro": 1,
          "step": "plain", "unscaled_at": set(), "iterations": 1, "bad_first": True,
          "seed": 0})  # scaler.scale(loss).backward(), then a plain optimizer.step()
def test_ok_only_when_every_step_reads_the_losses_gradient(setup):
    w, net, read, expected, factors, scale = run(setup)
    # the ground truth, from torch: each step read the factors' sum of the losses' gradients
    assert len(read) == len(expected)
    for got, want in zip(read, expected, strict=True):
        for name, g in got.items():
            torch.testing.assert_close(g, want[name], rtol=1e-4, atol=1e-7 * scale)
    right = all(f == 1.0 for fs in factors for f in fs)
    s = w.summary(checks=False)
    if right:
        assert s.startswith("gradients ok"), s
        assert "times the loss's gradient" not in s and "times smaller" not in s
        return
    assert not s.startswith("gradients ok"), s
    bad = next(fs for fs in reversed(factors) if any(f != 1.0 for f in fs))
    text = f"{scale:.0f}"
    if len(set(bad)) > 1:
        assert "different scales" in s, s
    elif bad[0] > 1:
        assert f"at {text} times the loss's gradient" in s and "scaler.scale(loss)" in s, s
    else:
        assert f"{text} times smaller than the loss's gradient" in s and "not scaled" in s, s
    why = w.why_no_grad("0.weight")
    assert "times the loss's gradient" in why, why
    for g in (net[0].weight.grad, net[0].bias.grad):
        assert g is None or torch.isfinite(g).all()  # nothing the step skipped


def test_a_scale_seen_after_the_block_ended_is_a_note_not_a_problem():
    # .grad still scaled when the block ends, no optimizer step seen: the step may come later
    torch.manual_seed(0)
    net = mlp([3, 4, 1])
    scaler = torch.amp.GradScaler("cpu", init_scale=256.0)
    with gradarg.watch(net) as w:
        scaler.scale(net(torch.randn(5, 3)).pow(2).mean()).backward()
    s = w.summary(checks=False)
    assert s.startswith("gradients ok") and "at 256 times the loss's gradient" in s, s
    assert "must come before an optimizer reads it" in s
