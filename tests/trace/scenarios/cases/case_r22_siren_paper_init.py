"""The control of ``siren_default_init_exploding``: the same SIREN with the paper's
initialisation, the first layer's weights ``U(-1/n, 1/n)`` and every later layer's
``U(-sqrt(6/n)/omega_0, sqrt(6/n)/omega_0)``, so that ``omega_0 * W`` keeps the activations'
distribution from layer to layer.  Backwards the layers' weight gradients stay within a factor of
ten of one another; every gradient is finite and nonzero.

Source: https://ogbonlab.com/textbooks/physics-informed-neural-networks-for-exploration-seismology/part-2-architectures-for-pinns/siren-sinusoidal-representation-networks
("every hidden activation is sin, with a special initialisation that keeps activations roughly
N(0, 1) through the stack"; "The default in the paper is omega_0 = 30"; "The first layer is
initialised with W ~ U(-omega_0 ..." [cut in the stored excerpt]).  Adapted: the paper's scheme
as published (first layer ``U(-1/n, 1/n)`` with ``omega_0`` applied in the activation, later
layers ``U(-sqrt(6/n)/omega_0, sqrt(6/n)/omega_0)``), the bug's network and data, Adam at 1e-4.
"""

import math

import torch
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK, Run
from torch import nn

SOURCE = (
    "https://ogbonlab.com/textbooks/physics-informed-neural-networks-for-exploration-seismology/"
    "part-2-architectures-for-pinns/siren-sinusoidal-representation-networks"
)
DESCRIPTION = "control: SIREN with the paper's init: layer gradients within a factor of ten"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    r"all[- ]zero",
    r"\bzero grad\w*",
    r"\bdead\b",
    r"explod\w*",
    r"vanish\w*",
]
OMEGA = 30.0


class Siren(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList(
            [nn.Linear(1, 32), nn.Linear(32, 32), nn.Linear(32, 32), nn.Linear(32, 1)]
        )
        with torch.no_grad():
            first = self.layers[0]
            first.weight.uniform_(-1 / first.in_features, 1 / first.in_features)
            for layer in self.layers[1:]:
                bound = math.sqrt(6 / layer.in_features) / OMEGA
                layer.weight.uniform_(-bound, bound)

    def forward(self, x):
        h = x
        for layer in self.layers[:-1]:
            h = torch.sin(OMEGA * layer(h))
        return self.layers[-1](h)


def data():
    x = torch.linspace(-1, 1, 128)[:, None]
    return x, torch.sin(2 * math.pi * x) + 0.5 * torch.sin(6 * math.pi * x)


def step(watch):
    torch.manual_seed(0)
    model = Siren()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-4)
    x, y = data()
    with watch(model) as w:
        optimizer.zero_grad()
        loss = ((model(x) - y) ** 2).mean()
        loss.backward()
        grads = {n: p.grad.detach().clone() for n, p in model.named_parameters()}
        optimizer.step()
    return Run(w=w, model=model, grads=grads, loss=loss.item())


def truth(run):
    norms = [float(run.grads[f"layers.{i}.weight"].norm()) for i in range(4)]
    assert max(norms) < 10 * min(norms)  # balanced across depth
    for g in run.grads.values():
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0)
