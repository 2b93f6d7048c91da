"""The control of ``centering_detached_mean_bias_drifts``: the same regressor with the centering
done by ``nn.BatchNorm1d`` (batch mean and variance in the graph, learnable scale and shift) and
the ``Linear`` before it written without a bias, since the normalisation's shift replaces it.
Autograd differentiates through the batch statistics; every parameter, the normalisation's
weight and bias included, gets a finite, nonzero gradient and the loss falls.

Source: https://theorempath.com/topics/batch-normalization ("Normalize activations within
mini-batches to stabilize and accelerate training, then scale and shift with learnable
parameters"; "y_i = γ x̂_i + β").  Adapted: ``Linear(8, 16, bias=False)``, ``BatchNorm1d(16)``,
``Tanh``, ``Linear(16, 1)``, 128 examples, SGD at 0.1.
"""

import torch
from case_r23_centering_detached_mean_bias_drifts import data
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://theorempath.com/topics/batch-normalization"
DESCRIPTION = "control: Linear(bias=False) + BatchNorm1d: statistics in the graph, all params train"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    r"all[- ]zero",
    r"\bzero grad\w*",
    r"\bdead\b",
    r"detach\w*",
]


def step(watch):
    torch.manual_seed(0)
    model = nn.Sequential(
        nn.Linear(8, 16, bias=False), nn.BatchNorm1d(16), nn.Tanh(), nn.Linear(16, 1)
    )
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = data()
    with watch(model) as w:
        optimizer.zero_grad()
        loss = F.mse_loss(model(x), y)
        loss.backward()
        grads = {n: p.grad.detach().clone() for n, p in model.named_parameters()}
        optimizer.step()
    with torch.no_grad():
        after = F.mse_loss(model(x), y).item()
    return Run(w=w, model=model, grads=grads, loss=loss.item(), after=after)


def truth(run):
    assert run.model[0].bias is None
    assert run.after < run.loss
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
