"""Contrastive-divergence training of an energy-based model whose Langevin sampler takes the input
gradient with ``energy.sum().backward()`` and reads ``x.grad``, with ``optimizer.zero_grad()``
called once before the sampler runs. Each of the 10 sampler backward passes also accumulates the
gradient of the summed energy of the 64 chains into every parameter's ``.grad``; the CD loss's
backward then adds its own gradient on top, and the optimizer steps on the sum, which the sampler's
part dominates by far (it is the gradient of 640 energies, not of a difference of two means). Every
gradient is finite; nothing raises.

Source: https://zero-to-ai.netlify.app/curriculum/24-advanced-dl/34_energy_based_models (its
sampler: "grad = torch.autograd.grad(energy, x, create_graph=False)[0]", "x = x - 0.5 * step_size *
grad + np.sqrt(step_size) * torch.randn_like(x)", "x = x.detach().requires_grad_(True)";
"Contrastive Divergence": "decrease energy of positives, increase energy of negatives"). Adapted: a
2-D two-moons-like data set, a LeakyReLU MLP energy whose last layer has no bias (a constant energy
cancels in the CD loss and would get an exactly zero gradient), 10 Langevin steps of size 0.01,
Adam; the sampler written with ``energy.backward()`` in place of the notebook's
``torch.autograd.grad``.
"""

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn

SOURCE = "https://zero-to-ai.netlify.app/curriculum/24-advanced-dl/34_energy_based_models"
DESCRIPTION = "EBM Langevin sampler calls energy.backward(): 10 passes pile into the params' .grad"
ASK = []
MUST = [
    [
        r"accumulat\w*",
        r"leak\w*|stale|left ?over",
        r"(not|never) (zeroed|cleared|reset)",
        r"zero_grad",
    ],
    [
        r"sampl\w*",
        r"langevin|mcmc",
        r"\b\d+ backward",
        r"backward (passes|calls)",
        r"(several|multiple|repeated|more than one) backward",
    ],
]
MUST_NOT = [FALSE_OK, CLAIMS_NONFINITE, r"not in (the |any )?optimizer"]
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
            model(x).sum().backward()  # for x.grad; also fills the parameters' .grad
            noise = torch.randn(x.shape, generator=g)
            x = x - 0.5 * STEP_SIZE * x.grad + STEP_SIZE**0.5 * 0.1 * noise
            x = x.clamp(-3, 3).detach().requires_grad_(True)
        x_neg = x.detach()
        loss = model(x_pos).mean() - model(x_neg).mean()
        loss.backward()
        grads = [p.grad.detach().clone() for p in model.parameters()]
        optimizer.step()
    return Run(w=w, model=model, before=before, x_pos=x_pos, x_neg=x_neg, grads=grads)


def total_norm(tensors):
    return float(torch.sqrt(sum((t**2).sum() for t in tensors)))


def truth(run):
    params = list(run.model.parameters())
    with torch.no_grad():
        for p, b in zip(params, run.before, strict=True):
            p.copy_(b)
    cd = torch.autograd.grad(run.model(run.x_pos).mean() - run.model(run.x_neg).mean(), params)
    leaked = [g - c for g, c in zip(run.grads, cd, strict=True)]
    for g in run.grads:
        assert bool(torch.isfinite(g).all())
    # the sampler's part dominates the stepped gradient
    assert total_norm(leaked) > 10 * total_norm(cd)
