"""A layer with a parametrization (``parametrizations.weight_norm``) applied twice per forward, as
the recurrent kernel of an unrolled cell, with ``torch.nn.utils.parametrize.cached()`` so that the
parametrized weight is computed once per forward, but the context manager wraps the whole training
loop instead of the forward.  The weight computed in the first iteration stays cached: the second
forward reuses that tensor (the weight from before the optimizer step), and the second
``backward()`` runs through its graph, which the first backward freed: it raises "Trying to
backward through the graph a second time".

Source: https://pytorch.org/docs/main/generated/torch.nn.utils.parametrize.cached.html ("The value
of the parametrized objects is computed and cached the first time they are required when this
context manager is active. The cached values are discarded when leaving the context manager";
"The simplest way to activate the cache is by wrapping the forward pass of the neural network").
"""

import torch
import torch.nn.utils.parametrize as P
from scenario_kit import FALSE_OK, Run
from torch import nn
from torch.nn import functional as F
from torch.nn.utils import parametrizations

SOURCE = "https://pytorch.org/docs/main/generated/torch.nn.utils.parametrize.cached.html"
DESCRIPTION = "parametrize.cached() around the whole loop: stale weight, 2nd backward raises"
ASK = []
MUST = [
    [r"\braised\b", r"RuntimeError", r"\berror\b", r"exception"],
    [r"\bcached?\b", r"parametri[sz]", r"weight_norm", r"\boriginal[01]?\b"],
]
MUST_NOT = [FALSE_OK]


class Cell(nn.Module):
    def __init__(self):
        super().__init__()
        self.inp = nn.Linear(4, 8)
        self.rec = parametrizations.weight_norm(nn.Linear(8, 8))
        self.out = nn.Linear(8, 1)

    def forward(self, x):
        h = torch.tanh(self.inp(x))
        for _ in range(2):  # the same parametrized weight used twice
            h = torch.tanh(self.rec(h))
        return self.out(h)


def data():
    g = torch.Generator().manual_seed(1)
    return torch.randn(16, 4, generator=g), torch.randn(16, 1, generator=g)


def step(watch):
    torch.manual_seed(0)
    model = Cell()
    x, y = data()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    losses, error = [], None
    g0 = model.rec.parametrizations.weight.original0.detach().clone()
    try:
        with watch(model) as w, P.cached():
            for _ in range(2):
                opt.zero_grad()
                loss = F.mse_loss(model(x), y)
                losses.append(loss.item())
                loss.backward()
                opt.step()
    except RuntimeError as e:
        error = e
    moved = not torch.equal(g0, model.rec.parametrizations.weight.original0.detach())
    return Run(w=w, losses=losses, error=error, moved=moved)


def truth(run):
    assert run.error is not None and "second time" in str(run.error)
    assert len(run.losses) == 2 and run.moved  # the first step ran and moved the weight
