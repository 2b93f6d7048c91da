"""Control: the same discriminator, data and Adam step with torch's own
``torch.nn.utils.parametrizations.spectral_norm`` on both layers: one power iteration per forward
in training mode (``u`` and ``v`` updated as buffers, under ``no_grad``), ``sigma`` computed from
the weight inside the graph, so ``parametrizations.weight.original`` gets the full gradient,
including the term through ``sigma``.  Nothing is wrong.

Source: https://pytorch.org/docs/stable/generated/torch.nn.utils.parametrizations.spectral_norm.html
("Spectral normalization stabilizes the training of discriminators (critics) in Generative
Adversarial Networks (GANs) by rescaling the weight tensor with spectral norm sigma of the weight
matrix calculated using power iteration method").
"""

import torch
from case_r8_spectral_norm_sigma_detached import d_loss, data
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK, Run
from torch import nn
from torch.nn.utils import parametrizations

SOURCE = (
    "https://pytorch.org/docs/stable/generated/torch.nn.utils.parametrizations.spectral_norm.html"
)
DESCRIPTION = "control: parametrizations.spectral_norm discriminator, sigma in the graph: healthy"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    r"\.data\b",
    r"no gradient",
    r"not (held|in (the|any) optimizer)",
]


def step(watch):
    torch.manual_seed(0)
    disc = nn.Sequential(
        parametrizations.spectral_norm(nn.Linear(8, 32)),
        nn.LeakyReLU(0.2),
        parametrizations.spectral_norm(nn.Linear(32, 1)),
    )
    real, fake = data()
    opt = torch.optim.Adam(disc.parameters(), lr=2e-4, betas=(0.5, 0.999))
    u_before = disc[0].parametrizations.weight[0]._u.clone()
    with watch(disc) as w:
        opt.zero_grad()
        d_loss(disc, real, fake).backward()
        grads = {n: p.grad.clone() for n, p in disc.named_parameters()}
        opt.step()
    with torch.no_grad():
        disc.eval()  # no power iteration: read the normalised weight as it is
        sn = torch.linalg.matrix_norm(disc[0].weight, ord=2).item()
    return Run(
        w=w, grads=grads, u_before=u_before, u_after=disc[0].parametrizations.weight[0]._u, sn=sn
    )


def truth(run):
    assert "0.parametrizations.weight.original" in run.grads
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
    assert not torch.equal(run.u_before, run.u_after)  # a power iteration ran in training mode
    assert abs(run.sn - 1.0) < 0.05  # the weight used is normalised to spectral norm ~1
