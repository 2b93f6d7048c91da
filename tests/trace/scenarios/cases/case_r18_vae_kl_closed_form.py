"""Control: the same VAE with the closed-form KL term written with its minus sign, ``kl = -0.5 *
sum(1 + logvar - mu^2 - exp(logvar))``: the value is the KL divergence between the encoder's
Gaussian and the N(0, I) prior, never negative, and its gradient pulls the means and
log-variances towards the prior while the reconstruction term pulls them apart. Every gradient is
finite and nonzero.

Source: https://kshirol-dev.github.io/learnAI/DeepLearning/08-autoencoders.html ("// KL divergence
(closed form for Gaussians): KL = -0.5 * Sum(1 + log(sigma^2) - mu^2 - sigma^2)"; "z = mu + sigma *
eps, eps ~ N(0, 1) // Allows backprop through sampling"). Adapted: a tanh MLP VAE of 8-dimensional
inputs with a 2-dimensional latent, the noise seeded, Adam.
"""

import torch
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://kshirol-dev.github.io/learnAI/DeepLearning/08-autoencoders.html"
DESCRIPTION = "control: VAE KL term -0.5 * sum(1 + logvar - mu^2 - e^logvar): KL >= 0 minimised"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [CLAIMS_NONFINITE, CLAIMS_ERROR, r"sign", r"maximi[sz]\w*", r"ascen\w*"]


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
        kl = -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp()) / len(x)
        loss = F.mse_loss(recon, x, reduction="sum") / len(x) + kl
        loss.backward()
        grads = {n: p.grad.detach().clone() for n, p in model.named_parameters()}
        optimizer.step()
    return Run(w=w, x=x, kl=kl.item(), grads=grads)


def truth(run):
    assert run.kl >= 0
    model = make_model()
    torch.manual_seed(2)
    recon, mu, logvar = model(run.x)
    true_kl = -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp()) / len(run.x)
    assert abs(run.kl - true_kl.item()) < 1e-5
    rec = F.mse_loss(recon, run.x, reduction="sum") / len(run.x)
    names = [n for n, _ in model.named_parameters()]
    elbo = dict(
        zip(names, torch.autograd.grad(rec + true_kl, list(model.parameters())), strict=True)
    )
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
        assert torch.allclose(g, elbo[n], atol=1e-5), n
