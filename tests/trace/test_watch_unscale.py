"""A ``GradScaler``'s ``unscale_`` is an observed event of ``watch`` (issue 43): one hook (the
wrapped ``unscale_``), one note in the summary naming it with its scale, and the same in
``GradWatch.why_no_grad``.  Expected figures are read from the scaler and the tensors here."""

from __future__ import annotations

import pytest
import torch
from torch import nn

import gradarg

pytestmark = pytest.mark.skipif(not hasattr(torch.amp, "GradScaler"),
                                reason="torch.amp.GradScaler('cpu') needs torch >= 2.3")


def mlp() -> nn.Sequential:
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(6, 8), nn.Tanh(), nn.Linear(8, 2))


X = torch.randn(5, 6, generator=torch.Generator().manual_seed(1))


def scaled_step(scale: float = 2.0 ** 10, *, unscale: bool = True, clip: float | None = None,
                step: str = "optimizer"):
    net = mlp()
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    scaler = torch.amp.GradScaler("cpu", init_scale=scale)
    with gradarg.watch(net) as w:
        scaler.scale(net(X).pow(2).mean()).backward()
        backward_left = net[0].weight.grad.clone()
        if unscale:
            scaler.unscale_(opt)
        if clip is not None:
            nn.utils.clip_grad_norm_(net.parameters(), clip)
        if step == "optimizer":
            opt.step()
        elif step == "scaler":
            scaler.step(opt)
    return w, net, scaler, backward_left


def test_unscale_is_named_with_its_scale_not_as_a_change_after_backward():
    w, net, scaler, left = scaled_step()
    # ground truth from torch: unscale_ divided .grad by the scaler's scale
    scale = scaler.get_scale()
    assert scale == 1024.0
    torch.testing.assert_close(net[0].weight.grad, left / scale)
    s = w.summary()
    assert "GradScaler's unscale_ divided .grad of every parameter by its scale, 1024" in s
    assert "before the optimizer step" in s
    assert "changed after backward" not in s and "clip" not in s
    assert s.startswith("gradients ok")
    why = w.why_no_grad("0.weight")
    assert "GradScaler's unscale_ divided .grad by its scale, 1024" in why
    assert "changed after backward" not in why
    assert [e.kind for e in w.parameters["0.weight"].events] == ["pass", "unscale", "step", "end"]


def test_scaler_step_runs_unscale_itself_and_it_is_observed():
    w, _, scaler, _ = scaled_step(2.0 ** 6, unscale=False, step="scaler")
    s = w.summary(checks=False)
    assert f"by its scale, {scaler.get_scale():.0f}" in s and "changed after backward" not in s


def test_clipping_after_unscale_is_read_beyond_the_unscale():
    w, net, scaler, left = scaled_step(clip=1e-3)
    unscaled = left / scaler.get_scale()
    # clip_grad_norm_'s factor, from torch: what it left over what unscale_ left
    total = torch.linalg.vector_norm(torch.stack(
        [torch.linalg.vector_norm(p.grad) for p in net.parameters()]))
    assert float(total) == pytest.approx(1e-3, rel=1e-4)
    factor = float(net[0].weight.grad.norm() / unscaled.norm())
    s = w.summary(checks=False)
    assert "by its scale, 1024" in s
    assert "beyond the GradScaler's unscale_ (1/1024)" in s and "clip_grad_norm_" in s
    assert gradarg.fmt(torch.tensor(factor)) in s or f"{factor:.3g}" in s
    why = w.why_no_grad("0.weight")
    assert "by its scale, 1024" in why and "changed after backward" in why


def test_no_scaler_no_note_and_the_method_is_restored():
    original = torch.amp.GradScaler.unscale_
    net = mlp()
    with gradarg.watch(net) as w, gradarg.watch(net) as inner:
        assert torch.amp.GradScaler.unscale_ is not original  # the hook is on
        net(X).pow(2).mean().backward()
    assert torch.amp.GradScaler.unscale_ is original  # nothing left behind
    assert "unscale_" not in w.summary(checks=False)
    assert "unscale_" not in inner.summary(checks=False)


def test_two_watches_both_see_it_and_removing_one_keeps_the_other():
    original = torch.amp.GradScaler.unscale_
    net = mlp()
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    scaler = torch.amp.GradScaler("cpu", init_scale=8.0)
    outer = gradarg.watch(net)
    inner = gradarg.watch(net)
    scaler.scale(net(X).pow(2).mean()).backward()
    outer.remove()
    scaler.unscale_(opt)
    opt.step()
    inner.remove()
    assert torch.amp.GradScaler.unscale_ is original
    assert "by its scale, 8" in inner.summary(checks=False)
    assert "unscale_ divided" not in outer.summary(checks=False)
