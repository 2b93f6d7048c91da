"""The same zero initialisation, weight.detach().zero_() and bias.detach().zero_(), applied to a
two-layer network: the hidden activations are tanh(0) = 0 and the output weights are 0, so the
gradients of the hidden layer and of the output weight are exactly zero; only the output bias
learns.  This is where "all gradients remain at zero" does happen.

Source: https://prodopsy.com/how-can-the-backward-function-in-tensor-influence-the-matrix-in-model
("Silent failure: Models train with zero parameter updates ... All gradients remain at zero";
the page's zero initialisation, here on a network with a hidden layer).
"""

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = (
    "https://prodopsy.com/how-can-the-backward-function-in-tensor-influence-the-matrix-in-model"
)
DESCRIPTION = "2-layer tanh net zero-initialised: fc1 and fc2.weight get all-zero gradients"
ASK = ["fc1.weight"]
MUST = [[r"\bfc1\b"], [r"\bzero", r"all-zero", r"symmetr"]]
MUST_NOT = [FALSE_OK, CLAIMS_NONFINITE, r"dead (relu|unit)"]


class TwoLayer(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(4, 8)
        self.fc2 = nn.Linear(8, 3)
        for layer in (self.fc1, self.fc2):
            layer.weight.detach().zero_()
            layer.bias.detach().zero_()

    def forward(self, x):
        return self.fc2(torch.tanh(self.fc1(x)))


def step(watch):
    torch.manual_seed(0)
    model = TwoLayer()
    x, y = torch.randn(32, 4), torch.randint(0, 3, (32,))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    with watch(model) as w:
        opt.zero_grad()
        cost = F.cross_entropy(model(x), y)
        cost.backward()
        opt.step()
    return Run(w=w, model=model)


def truth(run):
    m = run.model
    for p in (m.fc1.weight, m.fc1.bias, m.fc2.weight):
        assert p.grad is not None and bool((p.grad == 0).all())
        assert bool((p.detach() == 0).all())  # still zero after the step
    assert bool((m.fc2.bias.grad != 0).any())
