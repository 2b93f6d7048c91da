"""Class: a parameter whose entries beyond a magnitude get an exactly zero gradient (a
straight-through estimator passing ``|w| <= c``, a clamp or ``hardtanh`` of the weight in the
forward) never moves those entries; the watch names the parameter with the window.  A zero
gradient on other entries (dead units' rows, weights pruned by a magnitude mask, which are
the small ones) is not named.

The truth comes from torch alone: a twin of the step computes the gradient with
``torch.autograd.grad``; the window is there when at least 8 entries and one in twenty (not
all) get an exactly zero gradient and each of them is larger in magnitude than every entry
with a nonzero gradient, the weights read at the backward.  Generated: how the weight is used,
its scale, the optimizer, the seed.
"""

from __future__ import annotations

import re

import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn
from torch.nn import functional as F

import gradarg


class _Window(torch.autograd.Function):
    @staticmethod
    def forward(ctx, w, c):
        ctx.save_for_backward(w)
        ctx.c = c
        return torch.sign(w)

    @staticmethod
    def backward(ctx, grad):
        (w,) = ctx.saved_tensors
        return grad * (w.abs() <= ctx.c).to(grad.dtype), None


class _Net(nn.Module):
    def __init__(self, use, scale, c):
        super().__init__()
        self.inp = nn.Linear(6, 16)
        self.mid = nn.Parameter(torch.randn(16, 16) * scale)
        self.out = nn.Linear(16, 3)
        self.use, self.c = use, c
        if use == "normalised":  # unit rows along one axis each: q / |q| at (1, 0, 0, 0)
            with torch.no_grad():
                self.mid.copy_(scale * torch.eye(16)[torch.randperm(16)])
        if use == "dead":
            with torch.no_grad():
                self.inp.bias[:6] = -50.0  # six hidden units never fire: zero rows of mid

    def weight(self):
        w = self.mid
        if self.use == "ste":
            return _Window.apply(w, self.c)
        if self.use == "clamp":
            return w.clamp(-self.c, self.c)
        if self.use == "hardtanh":
            return F.hardtanh(w, -self.c, self.c)
        if self.use == "normalised":
            return w / w.norm(dim=1, keepdim=True)
        if self.use == "pruned":
            return w * (w.abs() > 0.5 * self.c)
        return w

    def forward(self, x):
        h = torch.relu(self.inp(x))
        return self.out(torch.tanh(h @ self.weight().T / 4))


def _grad(net, x, y):
    return torch.autograd.grad(F.cross_entropy(net(x), y), [net.mid])[0]


def _truth(net, x, y):
    g = _grad(net, x, y)
    zero, size = g == 0, net.mid.detach().abs()
    k = int(zero.sum())
    if k < max(8, 0.05 * g.numel()) or k == g.numel():
        return False
    if float(size[zero].min()) <= float(size[~zero].max()):
        return False
    # a window cancels the gradient of the large entries whatever the others hold: move the
    # others a little, and the large ones' gradient stays exactly zero (a normalisation's
    # zero, along the direction it removes, does not)
    kept = net.mid.detach().clone()
    with torch.no_grad():
        net.mid.add_(1e-3 * torch.randn_like(kept) * ~zero)
    try:
        return bool((_grad(net, x, y)[zero] == 0).all())
    finally:
        with torch.no_grad():
            net.mid.copy_(kept)


@settings(max_examples=30, deadline=None)
@given(use=st.sampled_from(["ste", "clamp", "hardtanh", "plain", "dead", "pruned", "normalised"]),
       scale=st.sampled_from([0.3, 1.0, 2.0]), c=st.sampled_from([0.5, 1.0]),
       adam=st.booleans(), seed=st.integers(0, 2**16))
def test_entries_beyond_a_magnitude_window_are_named(use, scale, c, adam, seed):
    torch.manual_seed(seed)
    net = _Net(use, scale, c)
    x, y = torch.randn(32, 6), torch.randint(0, 3, (32,))
    window = _truth(net, x, y)  # the truth, before any step
    opt = (torch.optim.Adam if adam else torch.optim.SGD)(net.parameters(), lr=1e-3)
    with gradarg.watch(net) as w:
        opt.zero_grad()
        F.cross_entropy(net(x), y).backward()
        opt.step()
    problems = " ".join(w.problems())
    named = re.search(r"entries of mid got an exactly zero gradient, and they are its largest",
                      problems)
    assert bool(named) == window, (use, scale, c, problems)
    if window and use != "plain":
        assert use in ("ste", "clamp", "hardtanh"), use
