"""A deep equilibrium classifier whose fixed point ``z* = tanh(W z* + U x + b)`` is found by a
black-box iteration run under ``torch.no_grad()`` (the solver's steps are not meant to be
backpropagated through), and whose head then reads ``z*`` itself.  The fixed point carries no graph:
the loss reaches the head only.  The cell ``W`` and the input injection ``U, b`` get no gradient
(``.grad`` stays ``None``), Adam skips them and they never move; the head trains alone on frozen
random features.  Nothing raises; every gradient that exists is finite.

Source: https://jyesawtellrickson.github.io/deep-equilbrium-models ("DEQs consist of a single layer
which is continually stacked on itself"; "you can apply root-finding methods (e.g., Broyden's
method, Newton's method) which allow you to jump straight to an answer"; "If we apply some black-box
root finding method, then we can no longer rely on backpropogation through the computation graph to
calculate gradients and train the network").  Adapted: plain fixed-point iteration (40 steps, the
cell scaled to a contraction), 6 classes of 12-dimensional points, a 32-unit state, Adam at 1e-3;
the step that would attach the gradient (implicit or one-step) is the one left out.
"""

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://jyesawtellrickson.github.io/deep-equilbrium-models"
DESCRIPTION = "DEQ fixed point solved under no_grad and fed to the head: cell, inject get no grad"
ASK = ["cell.weight"]
MUST = [
    [r"\bcell\b", r"\binject\b"],
    [
        r"no_grad",
        r"no[- ]grad mode",
        r"grad(ient)?[- ]mode",
        r"without (autograd|grad\w*|a graph)",
        r"(autograd|grad\w*) (was |is )?(disabled|off)",
        r"not (recorded|tracked)",
        r"(no|without a?) grad_fn",
        r"detach\w*",
        r"fixed[- ]point",
        r"solver",
        r"equilibrium",
    ],
]
MUST_NOT = [
    FALSE_OK,
    CLAIMS_NONFINITE,
    r"not in (the |any )?optimi[sz]er",
    r"requires_grad\s*(=|is|was)?\s*False",
    r"\bdead\b",
]
ITERATIONS = 40


class DEQ(nn.Module):
    def __init__(self):
        super().__init__()
        self.cell = nn.Linear(32, 32, bias=False)
        self.inject = nn.Linear(12, 32)
        self.head = nn.Linear(32, 6)
        with torch.no_grad():  # a contraction: spectral norm 0.8
            self.cell.weight.mul_(0.8 / torch.linalg.matrix_norm(self.cell.weight, 2))

    def f(self, z, x):
        return torch.tanh(self.cell(z) + self.inject(x))

    def solve(self, x):
        with torch.no_grad():
            z = torch.zeros(x.shape[0], 32)
            for _ in range(ITERATIONS):
                z = self.f(z, x)
            self.residual = float((self.f(z, x) - z).abs().max())
        return z

    def forward(self, x, attach=False):
        z = self.solve(x)
        if attach:  # one application of f with the graph: the one-step gradient
            z = self.f(z, x)
        return self.head(z), z


def data():
    g = torch.Generator().manual_seed(1)
    centres = 2.0 * torch.randn(6, 12, generator=g)
    y = torch.randint(0, 6, (96,), generator=g)
    return centres[y] + torch.randn(96, 12, generator=g), y


def step(watch, attach=False):
    torch.manual_seed(0)
    model = DEQ()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    x, y = data()
    before = {n: p.detach().clone() for n, p in model.named_parameters()}
    with watch(model) as w:
        optimizer.zero_grad()
        logits, _ = model(x, attach=attach)
        loss = F.cross_entropy(logits, y)
        loss.backward()
        optimizer.step()
    return Run(w=w, model=model, before=before, loss=float(loss.detach()), residual=model.residual)


def truth(run):
    assert math_isfinite(run.loss) and run.residual < 1e-5
    params = dict(run.model.named_parameters())
    for n in ("cell.weight", "inject.weight", "inject.bias"):
        assert params[n].grad is None and torch.equal(params[n].detach(), run.before[n]), n
    for n in ("head.weight", "head.bias"):
        g = params[n].grad
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
        assert not torch.equal(params[n].detach(), run.before[n]), n


def math_isfinite(v):
    return bool(torch.isfinite(torch.tensor(v)))
