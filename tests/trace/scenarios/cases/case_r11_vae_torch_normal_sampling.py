"""A VAE whose latent sample is drawn with ``z = torch.normal(mu, std)``.  ``torch.normal`` has a
backward (``NormalBackward``), but it returns zeros for both the mean and the standard deviation:
the reconstruction loss's gradient stops at the sample.  The decoder trains; the encoder, ``mu``
and ``logvar`` heads get only the KL term's gradient (exactly: it equals the gradient of the KL
term alone), so the encoder learns to match the prior and never to encode the input.  No
``.grad`` is None, every gradient is finite and nonzero.

Source: https://github.com/brennancheung/CourseAI (its VAE notebook: "Implement the
reparameterization trick and verify gradients flow through sampling"; "Implement the VAE loss
function (reconstruction + KL divergence)").
"""

import copy

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://github.com/brennancheung/CourseAI"
DESCRIPTION = "VAE z = torch.normal(mu, std): NormalBackward gives 0, encoder gets the KL grad only"
ASK = ["mu.weight"]
MUST = [
    [r"torch\.normal", r"\bnormal\(", r"NormalBackward", r"\bsampl", r"reparameteri"],
    [
        r"\bzero",
        r"no gradient",
        r"does(n't| not) (reach|flow|pass)",
        r"(stops|cut|blocked)",
        r"only[^\n]{0,30}\bKL\b",
        r"\bKL\b[^\n]{0,30}only",
    ],
]
MUST_NOT = [FALSE_OK, CLAIMS_NONFINITE]
ENCODER = ("enc.0.weight", "enc.0.bias", "mu.weight", "mu.bias", "logvar.weight", "logvar.bias")


class VAE(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.Sequential(nn.Linear(16, 32), nn.ReLU())
        self.mu = nn.Linear(32, 4)
        self.logvar = nn.Linear(32, 4)
        self.dec = nn.Sequential(nn.Linear(4, 32), nn.ReLU(), nn.Linear(32, 16))

    def forward(self, x, reparameterize: bool):
        h = self.enc(x)
        mu, logvar = self.mu(h), self.logvar(h)
        std = torch.exp(0.5 * logvar)
        if reparameterize:
            eps = torch.randn_like(std)
            z = mu + std * eps
        else:
            z = torch.normal(mu, std)  # the bug: NormalBackward gives mu and std zeros
        return self.dec(z), mu, logvar


def kl_term(mu, logvar):
    return -0.5 * torch.mean(torch.sum(1 + logvar - mu.pow(2) - logvar.exp(), dim=1))


def step(watch, reparameterize: bool = False):
    torch.manual_seed(0)
    model = VAE()
    start = copy.deepcopy(model)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    g = torch.Generator().manual_seed(1)
    x = torch.randn(32, 16, generator=g)
    with watch(model) as w:
        opt.zero_grad()
        recon, mu, logvar = model(x, reparameterize)
        loss = F.mse_loss(recon, x, reduction="sum") / len(x) + kl_term(mu, logvar)
        loss.backward()
        grads = {n: p.grad.clone() for n, p in model.named_parameters()}
        opt.step()
    # reference: the KL term's gradient alone, from the starting weights
    h = start.enc(x)
    kl = kl_term(start.mu(h), start.logvar(h))
    named = dict(start.named_parameters())
    kl_grads = dict(zip(ENCODER, torch.autograd.grad(kl, [named[n] for n in ENCODER]), strict=True))
    return Run(w=w, grads=grads, kl_grads=kl_grads)


def truth(run):
    for n in ENCODER:
        assert torch.allclose(run.grads[n], run.kl_grads[n], atol=1e-6), n
    assert bool(run.grads["dec.0.weight"].abs().sum() > 0)
