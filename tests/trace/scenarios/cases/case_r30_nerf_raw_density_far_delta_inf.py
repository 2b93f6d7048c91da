"""A tiny NeRF trained on rays whose density is the MLP's raw output, used without the ReLU (or
softplus) that keeps a density non-negative.  Volume rendering takes ``alpha = 1 - exp(-sigma *
delta)`` with NeRF's distance ``1e10`` after the last sample of each ray (the "infinite" segment
behind the far plane).  Where the raw density at a ray's last sample is negative, ``exp(-sigma *
1e10)`` overflows to ``inf``, that sample's ``alpha`` is ``-inf``, its weight ``-inf`` and the ray's
rendered colour ``-inf``: the photometric loss is ``inf`` and every parameter's gradient holds NaN.
Nothing raises; Adam then writes NaN into every parameter.

Source: https://github.com/KawsarAhmad43/Learnify ("Implementation: Volumetric Rendering (NeRF
Logic)"; ``alpha = 1.0 - torch.exp(-densities * delta)``; "T_i = Product(1 - alpha_j) for j < i";
``T = torch.cumprod(1.0 - alpha + 1e-10, dim=0)``; "This differentiable rendering allows us to
backpropagate from a 2D photo error to update the 3D density field").  Adapted: the density read
from a network instead of given (the page's densities are fixed, non-negative numbers), NeRF's
``1e10`` after the last sample, 64 rays of 16 samples between 2 and 6 through a ball of colour, an
MLP ``Linear(6, 32), Tanh, Linear(32, 32), Tanh, Linear(32, 4)`` on the sample's position and the
ray's direction, colour by sigmoid, Adam at 5e-4.
"""

import math

import torch
from scenario_kit import FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://github.com/KawsarAhmad43/Learnify"
DESCRIPTION = "NeRF raw density without relu, last delta 1e10: exp overflows, alpha -inf, NaN grads"
ASK = []
MUST = [
    [r"\bnan\b|\binf\b|non-?finite|infinit\w*|overflow\w*"],
    [
        r"densit\w*",
        r"sigma|σ",
        r"\balpha\b",
        r"negative",
        r"\brelu\b|softplus",
        r"1e10|1e\+10|10\s?\*\*\s?10",
        r"\bexp\b|exponential|overflow\w*",
        r"render\w*|transmittance|cumprod",
    ],
]
MUST_NOT = [FALSE_OK, r"\bdead\b", r"requires_grad\s*(=|is|was)?\s*False"]
RAYS, SAMPLES, NEAR, FAR = 64, 16, 2.0, 6.0


class TinyNeRF(nn.Module):
    def __init__(self):
        super().__init__()
        self.mlp = nn.Sequential(
            nn.Linear(6, 32), nn.Tanh(), nn.Linear(32, 32), nn.Tanh(), nn.Linear(32, 4)
        )

    def forward(self, points, dirs):
        raw = self.mlp(torch.cat([points, dirs.expand_as(points)], -1))
        return torch.sigmoid(raw[..., :3]), raw[..., 3]


def rays():
    g = torch.Generator().manual_seed(1)
    origins = torch.randn(RAYS, 3, generator=g)
    origins = 4 * origins / origins.norm(dim=1, keepdim=True)
    target = 0.3 * torch.randn(RAYS, 3, generator=g)
    dirs = target - origins
    dirs = dirs / dirs.norm(dim=1, keepdim=True)
    t = torch.linspace(NEAR, FAR, SAMPLES).expand(RAYS, SAMPLES)
    points = origins[:, None] + t[..., None] * dirs[:, None]
    # colour of a ball of radius 1 at the origin: red where the ray passes close, blue elsewhere
    miss = (origins + (-(origins * dirs).sum(1, keepdim=True)) * dirs).norm(dim=1)
    colour = torch.stack([torch.sigmoid(4 * (1 - miss)), 0.2 * torch.ones(RAYS), 1 - miss / 4], 1)
    return points, dirs[:, None], t, colour.clamp(0, 1)


def render(rgb, sigma, t):
    delta = torch.cat([t[:, 1:] - t[:, :-1], torch.full_like(t[:, :1], 1e10)], -1)
    alpha = 1.0 - torch.exp(-sigma * delta)
    trans = torch.cumprod(torch.cat([torch.ones_like(alpha[:, :1]), 1.0 - alpha + 1e-10], -1), -1)[
        :, :-1
    ]
    weights = alpha * trans
    return (weights[..., None] * rgb).sum(1), alpha


def step(watch, density=lambda raw: raw):
    torch.manual_seed(0)
    model = TinyNeRF()
    optimizer = torch.optim.Adam(model.parameters(), lr=5e-4)
    before = {n: p.detach().clone() for n, p in model.named_parameters()}
    points, dirs, t, colour = rays()
    with watch(model) as w:
        optimizer.zero_grad()
        rgb, raw_sigma = model(points, dirs)
        pixel, alpha = render(rgb, density(raw_sigma), t)
        loss = F.mse_loss(pixel, colour)
        loss.backward()
        grads = {n: p.grad.detach().clone() for n, p in model.named_parameters()}
        optimizer.step()
    return Run(
        w=w,
        model=model,
        before=before,
        raw_sigma=raw_sigma.detach(),
        alpha=alpha.detach(),
        pixel=pixel.detach(),
        loss=float(loss.detach()),
        grads=grads,
    )


def truth(run):
    last = run.raw_sigma[:, -1]
    assert bool((last < 0).any()) and bool((last > 0).any())
    # the last sample's alpha is -inf exactly where its raw density is negative
    assert torch.equal(torch.isinf(run.alpha[:, -1]), last < 0)
    assert bool(torch.isfinite(run.alpha[:, :-1]).all())
    assert bool(torch.isinf(run.pixel).any())
    assert not math.isfinite(run.loss)
    for n, g in run.grads.items():
        assert bool(torch.isnan(g).any()), n
    for n, p in run.model.named_parameters():
        assert bool(torch.isnan(p).any()), n
