"""A VAE whose closed-form KL term lost its leading minus: ``kl = 0.5 * sum(1 + logvar - mu^2 -
exp(logvar))`` instead of ``-0.5 * sum(...)``. Since ``1 + logvar - mu^2 - exp(logvar) <= 0`` term by
term, the value added to the reconstruction loss is minus the KL divergence (here negative, while a
KL divergence is never below 0): minimising the loss *maximises* the KL, so its gradient pushes
every mean away from 0 (d/d mu = -mu) and every log-variance away from 0, the posterior away from
the prior. Every gradient is finite and nonzero; nothing raises.

Source: https://learning-notes-dz2.pages.dev/posts/2026-01-10/ ("D_KL(N(mu, sigma^2 I) || N(0, I))
= 1/2 sum_j (mu_j^2 + sigma_j^2 - log sigma_j^2 - 1)"; "The encoder phi takes x and outputs two
vectors: a mean mu_phi(x) and a log-variance log sigma^2_phi(x)"). Adapted: the common form
``-1/2 sum (1 + logvar - mu^2 - sigma^2)`` written without its minus sign; a tanh MLP VAE of
8-dimensional inputs with a 2-dimensional latent, the noise seeded, Adam.
"""

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://learning-notes-dz2.pages.dev/posts/2026-01-10/"
DESCRIPTION = "VAE KL term 0.5 * sum(1 + logvar - mu^2 - e^logvar): sign dropped, KL maximised"
ASK = []
MUST = [
    [r"\bkl\b", r"kullback", r"diverg\w*", r"prior"],
    [r"sign", r"negative", r"maximi[sz]\w*", r"ascen\w*", r"minus"],
]
MUST_NOT = [FALSE_OK, CLAIMS_NONFINITE]


class VAE(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.Sequential(nn.Linear(8, 16), nn.Tanh())
        self.mu = nn.Linear(16, 2)
        self.logvar = nn.Linear(16, 2)
        self.dec = nn.Sequential(nn.Linear(2, 16), nn.Tanh(), nn.Linear(16, 8))

    def forward(self, x):
        h = self.enc(x)
        mu, logvar = self.mu(h), self.logvar(h)
        z = mu + torch.exp(0.5 * logvar) * torch.randn_like(mu)
        return self.dec(z), mu, logvar


def make_model():
    torch.manual_seed(0)
    return VAE()


def data():
    g = torch.Generator().manual_seed(1)
    return torch.randn(32, 8, generator=g)


def step(watch):
    model = make_model()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    x = data()
    with watch(model) as w:
        optimizer.zero_grad()
        torch.manual_seed(2)  # the reparameterization noise
        recon, mu, logvar = model(x)
        kl = 0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp()) / len(x)  # minus dropped
        loss = F.mse_loss(recon, x, reduction="sum") / len(x) + kl
        loss.backward()
        grads = {n: p.grad.detach().clone() for n, p in model.named_parameters()}
        optimizer.step()
    return Run(w=w, x=x, kl=kl.item(), grads=grads)


def truth(run):
    assert run.kl < 0  # a KL divergence is never negative: this is -KL
    model = make_model()
    torch.manual_seed(2)
    recon, mu, logvar = model(run.x)
    true_kl = -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp()) / len(run.x)
    assert abs(run.kl + true_kl.item()) < 1e-5
    rec = F.mse_loss(recon, run.x, reduction="sum") / len(run.x)
    names = [n for n, _ in model.named_parameters()]
    ascent = dict(
        zip(names, torch.autograd.grad(rec - true_kl, list(model.parameters())), strict=True)
    )
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
        assert torch.allclose(g, ascent[n], atol=1e-5), n  # the KL is ascended
