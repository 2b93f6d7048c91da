"""Class: an optimizer step that reads a ``.grad`` holding, besides its own loss's gradient,
the gradient of a loss backpropagated before another optimizer's step, with no ``zero_grad``
between (a GAN whose generator is trained first: its loss reaches the discriminator's
``.grad``).  The watch names the step, the other step and the parameters; the orders that are
right (the discriminator first, its ``zero_grad`` before its backward, two optimizers stepping
after one joint backward, accumulation over micro-batches before both steps, or one optimizer
stepping per micro-batch while the other accumulates a loss both share) are not named.

The truth comes from torch alone: whether D's ``.grad`` at its step equals the gradient of
D's own loss (``torch.autograd.grad`` at the same weights).  Generated: the order, the widths
and the seed.
"""

from __future__ import annotations

import copy

import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn
from torch.nn import functional as F

import gradarg

ORDERS = ["g-first", "g-first-d-zeroed", "d-first", "joint", "accumulated", "g-steps-between"]


class GAN(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.G = nn.Sequential(nn.Linear(3, width), nn.Tanh(), nn.Linear(width, 2))
        self.D = nn.Sequential(nn.Linear(2, width), nn.Tanh(), nn.Linear(width, 1))


def d_loss(D, real, fake):
    ones, zeros = torch.ones(len(real), 1), torch.zeros(len(fake), 1)
    return (F.binary_cross_entropy_with_logits(D(real), ones)
            + F.binary_cross_entropy_with_logits(D(fake), zeros))


@settings(max_examples=25, deadline=None)
@given(order=st.sampled_from(ORDERS), width=st.integers(2, 6), seed=st.integers(0, 2**16))
def test_a_step_on_another_losss_gradient_is_named(order, width, seed):
    torch.manual_seed(seed)
    gan = GAN(width)
    G, D = gan.G, gan.D
    optG = torch.optim.SGD(G.parameters(), lr=0.01)
    optD = torch.optim.SGD(D.parameters(), lr=0.01)
    real, z = torch.randn(8, 2), torch.randn(8, 3)
    seen = {}
    with gradarg.watch(gan) as w:
        optG.zero_grad()
        optD.zero_grad()
        if order == "d-first":
            fake = G(z)
            d_loss(D, real, fake.detach()).backward()
            seen["d_at"], seen["grad"] = copy.deepcopy(D), [p.grad.clone() for p in D.parameters()]
            seen["fake"] = fake.detach()
            optD.step()
            optG.zero_grad()
            F.binary_cross_entropy_with_logits(D(fake), torch.ones(8, 1)).backward()
            optG.step()
        elif order in ("joint", "accumulated", "g-steps-between"):
            halves = ((real, z),) if order == "joint" else ((real[:4], z[:4]), (real[4:], z[4:]))
            for half in halves:
                if order == "g-steps-between":
                    optG.zero_grad()
                fake = G(half[1])
                loss = d_loss(D, half[0], fake.detach()) + F.binary_cross_entropy_with_logits(
                    D(fake), torch.ones(len(fake), 1))
                loss.backward()
                if order == "g-steps-between":  # G steps per half, D accumulates over both
                    optG.step()
            seen = None
            optG.step()
            optD.step()
        else:
            fake = G(z)
            F.binary_cross_entropy_with_logits(D(fake), torch.ones(8, 1)).backward()
            optG.step()
            if order == "g-first-d-zeroed":
                optD.zero_grad()
            seen["d_at"], seen["fake"] = copy.deepcopy(D), fake.detach()
            d_loss(D, real, fake.detach()).backward()
            seen["grad"] = [p.grad.clone() for p in D.parameters()]
            optD.step()
    text = w.summary(checks=False)
    named = "also holds the gradient of a loss backpropagated before" in text
    if seen is None:  # one optimizer stepping after the other on the same backward(s)
        assert not named, text
        return
    own = torch.autograd.grad(d_loss(seen["d_at"], real, seen["fake"]),
                              list(seen["d_at"].parameters()))
    leaked = not all(torch.allclose(a, b, atol=1e-6) for a, b in
                     zip(seen["grad"], own, strict=True))
    assert leaked == (order == "g-first")  # the truth, from torch
    assert named == leaked, text
    if named:
        assert "D.0.weight" in text, text
