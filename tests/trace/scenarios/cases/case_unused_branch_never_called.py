"""A branch built in __init__ and held by the optimizer but never called in forward: its
parameters keep .grad None and do not move (the optimizer skips them).

Source: https://github.com/formll/dog/issues/3 ("Crash if grad is None": "If one of the params
has a value of None as the grad, then DoG will crash") -- with torch.optim the step silently
skips them.
"""

import torch
from scenario_kit import FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://github.com/formll/dog/issues/3"
DESCRIPTION = "branch 'extra' never called; optimizer holds it; .grad None, never moves"
ASK = ["extra.weight"]
MUST = [
    [r"\bextra\b"],
    [r"never called", r"not called", r"no gradient", r"\bNone\b", r"unused"],
]
MUST_NOT = [FALSE_OK]


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.main = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 2))
        self.extra = nn.Linear(8, 2)  # meant to be added to the output

    def forward(self, x):
        return self.main(x)


def step(watch):
    torch.manual_seed(0)
    model = Net()
    x, y = torch.randn(16, 8), torch.randint(0, 2, (16,))
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    before = model.extra.weight.detach().clone()
    with watch(model) as w:
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
    return Run(w=w, model=model, before=before)


def truth(run):
    assert run.model.extra.weight.grad is None
    assert torch.equal(run.model.extra.weight.detach(), run.before)
