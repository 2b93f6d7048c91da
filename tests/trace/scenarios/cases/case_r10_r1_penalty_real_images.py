"""Control: a discriminator step with the R1 penalty, ``gamma / 2 * E[ ||grad_x D(x)||^2 ]`` on real
samples only: the real batch gets ``requires_grad_(True)``, the penalty is the squared norm of
``torch.autograd.grad(D(real).sum(), real, create_graph=True)``, added to the non-saturating
logistic loss (``softplus``) on real and detached fake samples; one Adam step on the
discriminator.  The penalty reaches the discriminator's weights (asserted against the same step
without it).  A healthy step.

Source: https://vietanh.dev/glossary/r1%20regularization ("It penalizes the discriminator from
deviating from the Nash Equilibrium via penalizing the gradient on real data alone").
"""

import torch
import torch.nn.functional as F
from scenario_kit import CLAIMS_NO_ZERO_GRAD, CLAIMS_NONFINITE, HEALTHY_OK, Run
from torch import nn

SOURCE = "https://vietanh.dev/glossary/r1%20regularization"
DESCRIPTION = (
    "control: GAN discriminator step with the R1 penalty on real samples, create_graph=True"
)
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [CLAIMS_NONFINITE, CLAIMS_NO_ZERO_GRAD, r"adds nothing", r"without create_graph"]

GAMMA = 10.0


def d_loss(D, real, fake, penalty: bool):
    real = real.detach().requires_grad_(True)
    d_real, d_fake = D(real), D(fake.detach())
    loss = F.softplus(-d_real).mean() + F.softplus(d_fake).mean()
    if penalty:
        (grad,) = torch.autograd.grad(d_real.sum(), real, create_graph=True)
        loss = loss + GAMMA / 2 * grad.pow(2).sum(dim=1).mean()
    return loss


def step(watch):
    torch.manual_seed(0)
    G = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 2))
    D = nn.Sequential(nn.Linear(2, 16), nn.LeakyReLU(0.2), nn.Linear(16, 1))
    opt_d = torch.optim.Adam(D.parameters(), lr=1e-3, betas=(0.0, 0.99))
    g = torch.Generator().manual_seed(1)
    real = torch.randn(64, 2, generator=g) * 0.5 + torch.tensor([2.0, -1.0])
    fake = G(torch.randn(64, 4, generator=g))
    plain = torch.autograd.grad(d_loss(D, real, fake, False), list(D.parameters()))
    with watch(D) as w:
        opt_d.zero_grad()
        d_loss(D, real, fake, True).backward()
        with_penalty = [p.grad.detach().clone() for p in D.parameters()]
        opt_d.step()
    return Run(w=w, plain=plain, with_penalty=with_penalty)


def truth(run):
    assert not torch.allclose(run.plain[0], run.with_penalty[0])  # the penalty reached D
    assert all(torch.isfinite(g).all() for g in run.with_penalty)
