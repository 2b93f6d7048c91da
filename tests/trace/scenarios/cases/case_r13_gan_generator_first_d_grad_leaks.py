"""A GAN iteration that trains the generator first: both ``zero_grad`` calls at the top of the
iteration, then ``lossG = bce(D(G(z)), 1)`` backpropagated and ``optG.step()``, then the
discriminator's loss on real and detached fake samples backpropagated and ``optD.step()``.  The
generator's backward also goes through D and accumulates ``d lossG / d D`` into D's ``.grad``;
nothing clears it, so ``optD.step()`` applies the sum of the discriminator's own gradient and the
generator loss's gradient with respect to D, which pushes D toward calling the fakes real.  Every
gradient is finite and nonzero and nothing raises; D's update is not the gradient of its loss.

Source: https://tarepan.hatenablog.com/entry/2020/10/22/143519 ("Gを先にBackwardするとDの.gradが
貯まる" -- backpropagating G first accumulates D's .grad; the fixes it lists: "D先に学習" (train D
first), "Gの学習時はD.requires_grad = false", or "D学習前にNetD.zero_grad()" (zero D's gradients
before training D)).
"""

import copy

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://tarepan.hatenablog.com/entry/2020/10/22/143519"
DESCRIPTION = "GAN, G trained first: G's loss accumulates into D's .grad, optD steps on the sum"
ASK = []
MUST = [
    [r"\bD\.", r"discriminator", r"\bD\b"],
    [
        r"accumulat\w*",
        r"zero_grad",
        r"(sum|mix)\w*[^\n]{0,40}(gradients?|loss(es)?|backward)",
        r"(two|2|both) (backward|loss)",
        r"generator('s)? loss",
        r"lossG",
        r"leak\w*",
        r"stale",
    ],
]
MUST_NOT = [FALSE_OK, CLAIMS_NONFINITE, r"no_grad", r"dead (units?|relu|neurons?)"]


class GAN(nn.Module):
    def __init__(self):
        super().__init__()
        self.G = nn.Sequential(nn.Linear(4, 16), nn.Tanh(), nn.Linear(16, 2))
        self.D = nn.Sequential(nn.Linear(2, 16), nn.Tanh(), nn.Linear(16, 1))


def d_loss(D, real, fake):
    ones, zeros = torch.ones(real.shape[0], 1), torch.zeros(fake.shape[0], 1)
    return F.binary_cross_entropy_with_logits(D(real), ones) + F.binary_cross_entropy_with_logits(
        D(fake), zeros
    )


def step(watch, zero_d_before_its_backward: bool = False):
    torch.manual_seed(0)
    gan = GAN()
    G, D = gan.G, gan.D
    optG = torch.optim.Adam(G.parameters(), lr=2e-4, betas=(0.5, 0.999))
    optD = torch.optim.Adam(D.parameters(), lr=2e-4, betas=(0.5, 0.999))
    g = torch.Generator().manual_seed(1)
    real = torch.randn(32, 2, generator=g) * 0.5 + torch.tensor([2.0, -1.0])
    z = torch.randn(32, 4, generator=g)
    with watch(gan) as w:
        optG.zero_grad()
        optD.zero_grad()
        fake = G(z)
        lossG = F.binary_cross_entropy_with_logits(D(fake), torch.ones(32, 1))
        lossG.backward()
        optG.step()
        if zero_d_before_its_backward:
            optD.zero_grad()
        d_at_step = copy.deepcopy(D)  # D as optD.step() will see it (for the ground truth)
        held = [None if p.grad is None else p.grad.detach().clone() for p in D.parameters()]
        lossD = d_loss(D, real, fake.detach())
        lossD.backward()
        d_grads = [p.grad.detach().clone() for p in D.parameters()]
        optD.step()
    # the discriminator's own gradient at the same weights and samples
    own = torch.autograd.grad(d_loss(d_at_step, real, fake.detach()), list(d_at_step.parameters()))
    g_grads = [p.grad.detach().clone() for p in G.parameters()]
    return Run(w=w, d_grads=d_grads, own=own, leaked=held, g_grads=g_grads)


def truth(run):
    # D's .grad at its step = its own gradient + the generator loss's gradient with respect to D
    assert any(
        not torch.allclose(got, own, rtol=1e-2, atol=1e-6)
        for got, own in zip(run.d_grads, run.own, strict=True)
    )
    for got, own, leak in zip(run.d_grads, run.own, run.leaked, strict=True):
        assert leak is not None and bool(leak.abs().sum() > 0)
        assert torch.allclose(got, own + leak, rtol=1e-4, atol=1e-7)
    for gr in run.d_grads + run.g_grads:
        assert bool(torch.isfinite(gr).all()) and bool(gr.abs().sum() > 0)
