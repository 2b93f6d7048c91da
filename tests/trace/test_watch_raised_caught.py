"""Class: a ``backward()`` that raises after the gradient reached some parameters, its error
caught inside the ``with`` block (a training loop that logs and goes on): the parameters
below the node that raised get no gradient, and the summary and ``why_no_grad`` name the
error torch raised, not a cut by ``detach()`` or ``torch.no_grad()``.  Without the error
nothing of the kind is said.

The truth comes from torch alone: the exception caught, and which parameters' ``.grad`` is
None.  Generated: how the custom Function's backward fails (a gradient of the wrong shape,
an error raised in it, or no failure), which layer it sits after, the widths and the seed.
"""

from __future__ import annotations

import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn
from torch.nn import functional as F

import gradarg


class Scale(torch.autograd.Function):
    """2x, whose backward fails as ``how`` says."""

    @staticmethod
    def forward(ctx, x, how):
        ctx.how = how
        return 2 * x

    @staticmethod
    def backward(ctx, g):
        if ctx.how == "shape":
            return 2 * g.t(), None
        if ctx.how == "raise":
            raise ValueError("a bug in my backward")
        return 2 * g, None


class Net(nn.Module):
    def __init__(self, width, at, how):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(4, width), nn.Linear(width, width),
                                     nn.Linear(width, 1)])
        self.at, self.how = at, how

    def forward(self, x):
        for i, layer in enumerate(self.layers):
            x = torch.tanh(layer(x)) if i < 2 else layer(x)
            if i == self.at:
                x = Scale.apply(x, self.how)
        return x


@settings(max_examples=25, deadline=None)
@given(how=st.sampled_from(["shape", "raise", "none"]), at=st.integers(0, 1),
       width=st.integers(2, 5), seed=st.integers(0, 2**16))
def test_a_backward_that_raised_inside_the_block_is_named(how, at, width, seed):
    torch.manual_seed(seed)
    model = Net(width + (width == 3), at, how)   # never square at the Function (3 x 3)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = torch.randn(3, 4), torch.randn(3, 1)
    error = None
    with gradarg.watch(model) as w:
        opt.zero_grad()
        try:
            F.mse_loss(model(x), y).backward()
        except (RuntimeError, ValueError) as e:  # the loop logs it and goes on
            error = e
        opt.step()
    # the truth, from torch
    assert (error is not None) == (how != "none")
    below = [f"layers.{i}.weight" for i in range(at + 1)]
    grads = dict(model.named_parameters())
    assert all((grads[n].grad is None) == (error is not None) for n in below)
    assert grads["layers.2.weight"].grad is not None
    text = w.summary(checks=False)
    if error is None:
        assert "raised" not in text, text
        return
    message = str(error).splitlines()[0]
    why = w.why_no_grad(below[0])
    for said in (text, why):
        assert "raised" in said and message in said, said
        assert "no_grad" not in said and "detach" not in said, said


@settings(max_examples=20, deadline=None)
@given(needs=st.booleans(), width=st.integers(2, 5), seed=st.integers(0, 2**16))
def test_an_autograd_grad_that_raised_is_named(needs, width, seed):
    """A gradient penalty whose interpolates do not require grad: ``torch.autograd.grad``
    raises, the loop catches it and skips the step; the summary names the call and torch's
    error (truth: the exception torch raised, or none when the interpolates require grad)."""
    torch.manual_seed(seed)
    critic = nn.Sequential(nn.Linear(3, width), nn.Tanh(), nn.Linear(width, 1))
    opt = torch.optim.SGD(critic.parameters(), lr=0.1)
    real, fake = torch.randn(6, 3), torch.randn(6, 3)
    error = None
    with gradarg.watch(critic) as w:
        opt.zero_grad()
        x_hat = 0.5 * real + 0.5 * fake
        if needs:
            x_hat.requires_grad_(True)
        try:
            g, = torch.autograd.grad(critic(x_hat).sum(), x_hat, create_graph=True)
            ((g.norm(2, dim=1) - 1) ** 2).mean().backward()
            opt.step()
        except RuntimeError as e:
            error = e
    assert (error is None) == needs  # the truth, from torch
    text = w.summary(checks=False)
    if error is not None:
        assert "torch.autograd.grad call" in text and str(error).splitlines()[0] in text, text
    else:
        assert "raised" not in text, text
