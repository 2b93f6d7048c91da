"""A regressor whose output is clamped to the target range [0, 1] in ``forward``; the head's bias
was initialised at 5 (meant for targets in another unit), so every prediction is above 1 before
the clamp.  The clamp is flat there: its derivative is 0 for every example, every parameter
gets an all-zero gradient and the model never moves.

Source: https://discuss.pytorch.org/t/torch-round-gradient/28628/4 ("clamp() is linear, with
slope 1, inside (min, max) and flat outside of the range. This means the derivative is 1 inside
(min, max) and zero outside. It can be useful for learning as long as enough of the input is
inside the range").
"""

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://discuss.pytorch.org/t/torch-round-gradient/28628/4"
DESCRIPTION = "output clamp(0, 1) with every prediction above 1: all gradients exactly zero"
ASK = ["head.weight"]
MUST = [
    [r"clamp", r"clip", r"saturat", r"outside (the |its )?(range|interval|bounds)", r"\bflat\b"],
    [r"\bzero", r"no gradient"],
]
MUST_NOT = [FALSE_OK, CLAIMS_NONFINITE]


class Regressor(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(6, 16), nn.Tanh())
        self.head = nn.Linear(16, 1)
        with torch.no_grad():
            self.head.bias.fill_(5.0)

    def forward(self, x):
        return torch.clamp(self.head(self.body(x)), 0.0, 1.0)


def step(watch):
    torch.manual_seed(0)
    model = Regressor()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    g = torch.Generator().manual_seed(1)
    x, y = torch.randn(32, 6, generator=g), torch.rand(32, 1, generator=g)
    before = [p.detach().clone() for p in model.parameters()]
    with torch.no_grad():
        raw = model.head(model.body(x))
    with watch(model) as w:
        opt.zero_grad()
        F.mse_loss(model(x), y).backward()
        opt.step()
    return Run(w=w, model=model, raw=raw, before=before)


def truth(run):
    assert bool((run.raw > 1.0).all())  # every example outside the clamp's range
    for p, b in zip(run.model.parameters(), run.before, strict=True):
        assert p.grad is not None and bool((p.grad == 0).all())
        assert torch.equal(p.detach(), b)
