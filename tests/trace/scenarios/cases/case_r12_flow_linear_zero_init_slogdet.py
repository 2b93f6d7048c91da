"""A small normalizing flow (an invertible linear layer ``z = x W^T + b`` followed by an affine
coupling layer) trained by exact maximum likelihood: the negative log-likelihood is the standard
normal's ``0.5 |z|**2 + const`` minus the log-determinants, the linear layer's from
``torch.linalg.slogdet(W)``.  The linear layer's weight is zero-initialised, as flows zero-
initialise layers to start at the identity, but a zero matrix is not the identity: it is singular,
``slogdet`` returns ``logabsdet = -inf``, the loss is ``+inf`` and ``lin.weight``'s gradient
(``-W^{-T}`` from the log-determinant) is NaN / -inf.  Adam's step writes NaN into ``lin.weight``.
The coupling layer, which sees ``z = 0``, gets finite gradients (all-zero for its first
weight, whose input is 0).

Source: https://apxml.com/courses/intro-normalizing-flows/chapter-5-training-flow-models/loss-functions-density-estimation
("the maximum likelihood estimation problem is converted into a minimization problem by taking the
negative of the log-likelihood"; "If the network tries to compress the entire input space into a
single point, the log-determinant term will penalize the model heavily because the computed
volume of the space is shrinking drastically").  Adapted: the flow is two small layers, its
linear layer started at zero.
"""

import math

import torch
from scenario_kit import FALSE_OK, Run
from torch import nn

SOURCE = (
    "https://apxml.com/courses/intro-normalizing-flows/"
    "chapter-5-training-flow-models/loss-functions-density-estimation"
)
DESCRIPTION = "linear flow layer zero-initialised: slogdet -inf, loss inf, lin.weight grad NaN"
ASK = ["lin.weight"]
MUST = [
    [
        r"slogdet",
        r"determinant",
        r"log[-_ ]?(abs[-_ ]?)?det",
        r"singular",
        r"not invertible",
    ],
    [
        r"lin\.weight",
        r"zero[s-]?[- ]?init",
        r"all[- ]zeros?",
        r"-inf",
        r"\binf\b",
        r"infinit",
    ],
]
MUST_NOT = [
    FALSE_OK,
    r"learning rate (is |was )?too (high|large)",
    r"explod",
    r"dead (units?|relu|neurons?)",
]
DIM = 4


class LinearFlow(nn.Module):
    def __init__(self, weight):
        super().__init__()
        self.weight = nn.Parameter(weight)
        self.bias = nn.Parameter(torch.zeros(DIM))

    def forward(self, x):
        logabsdet = torch.linalg.slogdet(self.weight)[1]
        return x @ self.weight.T + self.bias, logabsdet.expand(x.shape[0])


class Coupling(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(DIM // 2, 16), nn.Tanh(), nn.Linear(16, DIM))

    def forward(self, x):
        x1, x2 = x.chunk(2, dim=1)
        s, t = self.net(x1).chunk(2, dim=1)
        s = torch.tanh(s)
        return torch.cat([x1, x2 * torch.exp(s) + t], dim=1), s.sum(1)


class Flow(nn.Module):
    def __init__(self, weight):
        super().__init__()
        self.lin = LinearFlow(weight)
        self.coupling = Coupling()

    def forward(self, x):
        z, ld1 = self.lin(x)
        z, ld2 = self.coupling(z)
        return z, ld1 + ld2


def nll(z, logdet):
    log_pz = -0.5 * z.pow(2).sum(1) - 0.5 * z.shape[1] * math.log(2 * math.pi)
    return -(log_pz + logdet).mean()


def step(watch, init: str = "zeros"):
    torch.manual_seed(0)
    # the control: a random rotation, as Glow starts its invertible 1x1 convolutions
    rotation = torch.linalg.qr(torch.randn(DIM, DIM))[0]
    weight = torch.zeros(DIM, DIM) if init == "zeros" else rotation
    model = Flow(weight)
    logabsdet = torch.linalg.slogdet(weight)[1].item()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    g = torch.Generator().manual_seed(1)
    x = torch.randn(64, DIM, generator=g) @ torch.tensor(
        [[1.0, 0.5, 0.0, 0.0], [0.0, 1.0, 0.3, 0.0], [0.0, 0.0, 1.0, -0.4], [0.2, 0.0, 0.0, 1.0]]
    )
    with watch(model) as w:
        opt.zero_grad()
        z, logdet = model(x)
        loss = nll(z, logdet)
        loss.backward()
        opt.step()
    grads = {n: p.grad.detach().clone() for n, p in model.named_parameters()}
    params = {n: p.detach().clone() for n, p in model.named_parameters()}
    return Run(w=w, logabsdet=logabsdet, loss=loss.item(), grads=grads, params=params)


def truth(run):
    assert run.logabsdet == -math.inf
    assert run.loss == math.inf
    assert not bool(torch.isfinite(run.grads["lin.weight"]).any())
    for n, gr in run.grads.items():
        if n.startswith("coupling."):
            assert bool(torch.isfinite(gr).all()), n
    assert bool(torch.isnan(run.params["lin.weight"]).all())
