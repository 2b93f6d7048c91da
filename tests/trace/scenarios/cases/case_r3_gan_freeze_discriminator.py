"""Control: one GAN iteration as the alternating loop prescribes.  The discriminator step sees
G(z).detach(); for the generator step the discriminator is frozen (requires_grad_(False)), the
generator's loss backpropagates through it to the generator only, and the discriminator is
unfrozen afterwards.  The watched module holds both networks.

Source: https://pexcera.com/learn/advanced-dl/the-discriminator-and-generator-loop.html ("The
Discriminator and Generator Loop": "we first freeze the generator parameters and update the
discriminator ... gradient flow is stopped at the generator's outputs using the .detach()
operation" ... "Next, we freeze the discriminator parameters and update the generator").
"""

import torch
from scenario_kit import CLAIMS_NO_ZERO_GRAD, CLAIMS_NONFINITE, HEALTHY_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://pexcera.com/learn/advanced-dl/the-discriminator-and-generator-loop.html"
DESCRIPTION = "control: D step on G(z).detach(), G step with D frozen then unfrozen: as designed"
ASK = []
MUST = [[HEALTHY_OK, r"frozen"]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_NO_ZERO_GRAD,
    r"accumulat",
    r"sum of (2|two) backward",
    r"\bD\.[^\n]*never called",
    r"(updated|stepped) twice",
    r"frozen[^\n]*(still )?moved",
]


class GAN(nn.Module):
    def __init__(self):
        super().__init__()
        self.G = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 2))
        self.D = nn.Sequential(nn.Linear(2, 16), nn.LeakyReLU(0.2), nn.Linear(16, 1))


def step(watch):
    torch.manual_seed(0)
    gan = GAN()
    opt_g = torch.optim.Adam(gan.G.parameters(), lr=2e-4, betas=(0.5, 0.999))
    opt_d = torch.optim.Adam(gan.D.parameters(), lr=2e-4, betas=(0.5, 0.999))
    g = torch.Generator().manual_seed(1)
    real, z = torch.randn(32, 2, generator=g) + 3, torch.randn(32, 4, generator=g)
    ones, zeros = torch.ones(32, 1), torch.zeros(32, 1)
    bce = F.binary_cross_entropy_with_logits
    with watch(gan) as w:
        opt_d.zero_grad()
        fake = gan.G(z)
        d_loss = bce(gan.D(real), ones) + bce(gan.D(fake.detach()), zeros)
        d_loss.backward()
        d_grads = [p.grad.clone() for p in gan.D.parameters()]
        opt_d.step()
        gan.D.requires_grad_(False)
        opt_g.zero_grad()
        g_loss = bce(gan.D(gan.G(z)), ones)
        g_loss.backward()
        g_grads = [p.grad.clone() for p in gan.G.parameters()]
        opt_g.step()
        gan.D.requires_grad_(True)
    return Run(w=w, gan=gan, d_grads=d_grads, g_grads=g_grads)


def truth(run):
    for p, d in zip(run.gan.D.parameters(), run.d_grads, strict=True):
        assert p.requires_grad and torch.equal(p.grad, d)  # the G step left D's .grad alone
    for g in run.g_grads:
        assert bool(torch.isfinite(g).all()) and bool((g != 0).any())
