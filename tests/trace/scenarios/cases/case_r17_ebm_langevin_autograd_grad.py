"""Control: contrastive-divergence training of an energy-based model with the notebook's Langevin
sampler, which takes the input gradient with ``torch.autograd.grad(energy, x)``: that leaves the
parameters' ``.grad`` untouched, so after the CD loss's backward each parameter holds exactly the
gradient of ``mean E(x_pos) - mean E(x_neg)``, finite and nonzero, and the step uses it.

Source: https://zero-to-ai.netlify.app/curriculum/24-advanced-dl/34_energy_based_models ("def
sample_langevin(energy_net, x_init, n_steps=60, step_size=10.0)"; "grad =
torch.autograd.grad(energy, x, create_graph=False)[0]"; "x = x.detach().requires_grad_(True)";
"Update: decrease energy of positives, increase energy of negatives"). Adapted: a 2-D two-moons-like
data set, a LeakyReLU MLP energy whose last layer has no bias (a constant energy cancels in the CD
loss and would get an exactly zero gradient), 10 Langevin steps of size 0.01, Adam.
"""

import torch
from scenario_kit import CLAIMS_ERROR, CLAIMS_NO_ZERO_GRAD, CLAIMS_NONFINITE, HEALTHY_OK, Run
from torch import nn

SOURCE = "https://zero-to-ai.netlify.app/curriculum/24-advanced-dl/34_energy_based_models"
DESCRIPTION = "control: EBM, Langevin input grads by torch.autograd.grad, CD loss gradient only"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    CLAIMS_NO_ZERO_GRAD,
    r"leak\w*",
    r"accumulated (from|over|across)",
    r"\b(zero|no) gradient",
]
STEPS, STEP_SIZE = 10, 0.01


def data():
    g = torch.Generator().manual_seed(1)
    a = torch.rand(64, generator=g) * 3.1416
    x = torch.stack([torch.cos(a), torch.sin(a)], 1)
    x[32:] = x[32:] * torch.tensor([1.0, -1.0]) + torch.tensor([1.0, 0.5])
    return x + 0.05 * torch.randn(64, 2, generator=g), g


def make_model():
    torch.manual_seed(0)
    return nn.Sequential(
        nn.Linear(2, 32),
        nn.LeakyReLU(0.2),
        nn.Linear(32, 32),
        nn.LeakyReLU(0.2),
        nn.Linear(32, 1, bias=False),
    )


def step(watch):
    model = make_model()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    x_pos, g = data()
    x_init = 4 * torch.rand(64, 2, generator=g) - 2
    before = [p.detach().clone() for p in model.parameters()]
    with watch(model) as w:
        optimizer.zero_grad()
        x = x_init.clone().requires_grad_(True)
        for _ in range(STEPS):
            (x_grad,) = torch.autograd.grad(model(x).sum(), x)
            noise = torch.randn(x.shape, generator=g)
            x = x - 0.5 * STEP_SIZE * x_grad + STEP_SIZE**0.5 * 0.1 * noise
            x = x.clamp(-3, 3).detach().requires_grad_(True)
        x_neg = x.detach()
        loss = model(x_pos).mean() - model(x_neg).mean()
        loss.backward()
        grads = [p.grad.detach().clone() for p in model.parameters()]
        optimizer.step()
    return Run(w=w, model=model, before=before, x_pos=x_pos, x_neg=x_neg, grads=grads)


def truth(run):
    params = list(run.model.parameters())
    with torch.no_grad():
        for p, b in zip(params, run.before, strict=True):
            p.copy_(b)
    cd = torch.autograd.grad(run.model(run.x_pos).mean() - run.model(run.x_neg).mean(), params)
    for g, c in zip(run.grads, cd, strict=True):
        assert torch.allclose(g, c, atol=1e-7)  # exactly the CD loss's gradient
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0)
