"""A beta-VAE trained with the controlled-capacity objective ``recon + gamma * |KL - C|`` written
without the absolute value, ``recon + gamma * (KL - C)``. ``C`` is then a constant that shifts the
loss and nothing else: the gradient is that of ``recon + gamma * KL`` (a beta-VAE with ``beta =
1000``), whatever the capacity schedule says.  At this point of the schedule ``C = 5`` nats and the
KL is below 1, so the intended objective pushes the KL up (its gradient with respect to the KL is
``-gamma``); the step pushes it down (``+gamma``), towards a collapsed posterior.  Every gradient is
finite and nonzero and nothing raises.

Source: https://www.scholarfeed.org/paper/1804.03599v1 ("Understanding disentangling in beta-VAE";
"the paper tackles the problem of understanding and improving disentangled representation learning
in beta-VAEs by providing new theoretical insights and proposing a training modification that
progressively increases latent code capacity, resulting in robust disentanglement without
sacrificing reconstruction accuracy").  Adapted: the objective ``gamma |KL - C|`` of the paper
written without ``abs``; ``gamma = 1000``, ``C`` raised linearly from 0 to 25 nats over 100000
iterations and read at iteration 20000; 128 vectors of 64 values made by a fixed random network from
2 factors, an encoder ``Linear(64, 64), ELU`` to a mean and a log-variance of 6 latents, a decoder
``Linear(6, 64), ELU, Linear(64, 64)``, a summed Gaussian reconstruction error, Adam at 5e-4.
"""

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://www.scholarfeed.org/paper/1804.03599v1"
DESCRIPTION = "beta-VAE capacity term gamma * (KL - C) without abs: C has no effect, KL pushed down"
ASK = []
MUST = [
    [
        r"\babs\b|absolute|\|\s?KL\s?-\s?C\s?\|",
        r"capacity",
        r"\bC\b[^\n]{0,40}(constant|no effect|does nothing|drops? out)",
    ],
    [
        r"sign|wrong direction|(pushes|drives|pulls) (the )?KL (down|towards? (zero|0))",
        r"collaps\w*",
    ],
]
MUST_NOT = [FALSE_OK, CLAIMS_NONFINITE, r"\bdead\b", r"requires_grad\s*(=|is|was)?\s*False"]
GAMMA, C_MAX, ITERATIONS, NOW, LATENTS = 1000.0, 25.0, 100000, 20000, 6


class VAE(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(64, 64), nn.ELU())
        self.mu, self.logvar = nn.Linear(64, LATENTS), nn.Linear(64, LATENTS)
        self.decoder = nn.Sequential(nn.Linear(LATENTS, 64), nn.ELU(), nn.Linear(64, 64))

    def forward(self, x):
        h = self.encoder(x)
        mu, logvar = self.mu(h), self.logvar(h)
        z = mu + torch.exp(0.5 * logvar) * torch.randn_like(mu)
        return self.decoder(z), mu, logvar


def data():
    g = torch.Generator().manual_seed(1)
    factors = torch.rand(128, 2, generator=g) * 2 - 1
    w1, w2 = torch.randn(2, 32, generator=g), torch.randn(32, 64, generator=g) / 4
    return torch.tanh(factors @ w1) @ w2


def step(watch, absolute=False):
    torch.manual_seed(0)
    model = VAE()
    optimizer = torch.optim.Adam(model.parameters(), lr=5e-4)
    x = data()
    capacity = C_MAX * NOW / ITERATIONS
    with watch(model) as w:
        optimizer.zero_grad()
        recon, mu, logvar = model(x)
        rec = F.mse_loss(recon, x, reduction="sum") / len(x)
        kl = (-0.5 * (1 + logvar - mu**2 - logvar.exp()).sum(1)).mean()
        kl.retain_grad()
        gap = kl - capacity
        loss = rec + GAMMA * (gap.abs() if absolute else gap)
        loss.backward()
        grads = {n: p.grad.detach().clone() for n, p in model.named_parameters()}
        optimizer.step()
    return Run(w=w, model=model, kl=float(kl.detach()), kl_grad=float(kl.grad), grads=grads)


def truth(run):
    assert run.kl < 5.0
    assert run.kl_grad == GAMMA  # the KL is pushed down although it is below the capacity
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
