"""A SIREN (sine activations ``sin(30 * Linear(h))`` in every hidden layer) built on ``nn.Linear``'s
default initialisation, without the paper's scheme.  Backwards, each sine layer multiplies the
gradient by ``30 * W^T cos(.)``: with default weights (``U(-1/sqrt(32), 1/sqrt(32))``) that is about
10 times per layer, so the first layer's weight gradient is some 140 times the last layer's (the
first bias's some 800 times the last bias's), growing layer by layer towards the input.  The early
layers take huge, erratic steps.  Every gradient is finite; nothing raises.

Source: https://tech.fusic.co.jp/posts/2021-08-03-what-are-sirens/ ("Training a network with a sine
activation function has notoriously been difficult, due to it being periodic, but Vincent Sitzmann
et. al. propose a special initialization method, which ensures consistency of the output
distribution when propagating through layers").  Adapted: a SIREN with ``omega_0 = 30`` in all three
hidden layers (``Linear(1, 32)``, two ``Linear(32, 32)``, a ``Linear(32, 1)`` read-out), fitting
``sin(2 pi x) + 0.5 sin(6 pi x)`` on 128 points of ``[-1, 1]``, Adam at 1e-4, one step.
"""

import math

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn

SOURCE = "https://tech.fusic.co.jp/posts/2021-08-03-what-are-sirens/"
DESCRIPTION = "SIREN (omega_0 = 30) with default Linear init: gradients grow ~10x per layer inward"
ASK = []
MUST = [
    [
        r"explod\w*",
        r"(large|huge|big) gradients?",
        r"gradients?[^\n]{0,60}(grow|larger|amplif|increas)\w*",
    ],
    [r"init\w*", r"omega", r"ω", r"\bw_?0\b", r"\b30\b", r"siren", r"\bsine?\b"],
]
MUST_NOT = [FALSE_OK, CLAIMS_NONFINITE, r"vanish\w*", r"all[- ]zero"]
OMEGA = 30.0


class Siren(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList(
            [nn.Linear(1, 32), nn.Linear(32, 32), nn.Linear(32, 32), nn.Linear(32, 1)]
        )

    def forward(self, x):
        h = x
        for layer in self.layers[:-1]:
            h = torch.sin(OMEGA * layer(h))
        return self.layers[-1](h)


def data():
    x = torch.linspace(-1, 1, 128)[:, None]
    return x, torch.sin(2 * math.pi * x) + 0.5 * torch.sin(6 * math.pi * x)


def build():
    torch.manual_seed(0)
    return Siren()  # nn.Linear's default initialisation


def step(watch):
    model = build()
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
    assert norms[0] > norms[1] > norms[2] > norms[3]  # growing towards the input
    assert norms[0] > 50 * norms[3]
    for g in run.grads.values():
        assert bool(torch.isfinite(g).all())
