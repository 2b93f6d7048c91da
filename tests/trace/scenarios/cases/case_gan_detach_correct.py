"""Control: the usual GAN step: D trained on real and on fake.detach(), then G trained through
D; D's parameters legitimately receive the gradients of two losses, zero_grad is called.

Source: https://blog.csdn.net/odbej/article/details/125158288 (the fix) and
https://stats.stackexchange.com/questions/237944/how-is-the-generator-in-a-gan-trained/473545
"""

import torch
from scenario_kit import CLAIMS_ERROR, CLAIMS_NO_ZERO_GRAD, CLAIMS_NONFINITE, HEALTHY_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://blog.csdn.net/odbej/article/details/125158288"
DESCRIPTION = "control: standard GAN step with fake.detach() for D; both nets move"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [CLAIMS_NO_ZERO_GRAD, CLAIMS_NONFINITE, CLAIMS_ERROR]


class GAN(nn.Module):
    def __init__(self):
        super().__init__()
        self.G = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 6))
        self.D = nn.Sequential(nn.Linear(6, 8), nn.LeakyReLU(0.2), nn.Linear(8, 1))


def step(watch):
    torch.manual_seed(0)
    gan = GAN()
    opt_g = torch.optim.Adam(gan.G.parameters(), lr=1e-3)
    opt_d = torch.optim.Adam(gan.D.parameters(), lr=1e-3)
    z, real = torch.randn(16, 4), torch.randn(16, 6)
    ones, zeros = torch.ones(16, 1), torch.zeros(16, 1)
    g0 = [p.detach().clone() for p in gan.G.parameters()]
    d0 = [p.detach().clone() for p in gan.D.parameters()]
    with watch(gan) as w:
        fake = gan.G(z)
        opt_d.zero_grad()
        loss_d = F.binary_cross_entropy_with_logits(
            gan.D(real), ones
        ) + F.binary_cross_entropy_with_logits(gan.D(fake.detach()), zeros)
        loss_d.backward()
        opt_d.step()
        opt_g.zero_grad()
        loss_g = F.binary_cross_entropy_with_logits(gan.D(fake), ones)
        loss_g.backward()
        opt_g.step()
    return Run(w=w, model=gan, g0=g0, d0=d0)


def truth(run):
    for p, p0 in zip(run.model.G.parameters(), run.g0, strict=True):
        assert p.grad is not None and bool(torch.isfinite(p.grad).all())
        assert not torch.equal(p.detach(), p0)
    for p, p0 in zip(run.model.D.parameters(), run.d0, strict=True):
        assert not torch.equal(p.detach(), p0)
