"""torch.round between two layers: its derivative is zero almost everywhere, so the first
layer gets a gradient that is all zeros (not None).

Source: https://codemia.io/knowledge-hub/path/intermediate_layer_makes_tensorflow_optimizer_to_stop_working_1
("inserting an operation such as argmax, integer casting, or explicit gradient blocking into
the middle of the model ... learning effectively stops"); torch.round is the PyTorch case that
returns zeros rather than None.
"""

import torch
from scenario_kit import FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://codemia.io/knowledge-hub/path/intermediate_layer_makes_tensorflow_optimizer_to_stop_working_1"
DESCRIPTION = "torch.round between layers: first gets an all-zero gradient"
ASK = ["first.weight"]
MUST = [[r"\bfirst\b"], [r"\bzero", r"round"]]
MUST_NOT = [FALSE_OK, r"first\.weight[^\n]*(\bNone\b|no gradient reached)"]


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.first = nn.Linear(8, 8)
        self.head = nn.Linear(8, 1)

    def forward(self, x):
        return self.head(torch.round(self.first(x) * 4) / 4)


def step(watch):
    torch.manual_seed(0)
    model = Net()
    x, y = torch.randn(32, 8), torch.randn(32, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    with watch(model) as w:
        opt.zero_grad()
        loss = F.mse_loss(model(x), y)
        loss.backward()
        opt.step()
    return Run(w=w, model=model)


def truth(run):
    g = run.model.first.weight.grad
    assert g is not None and bool((g == 0).all())
    assert bool(run.model.head.weight.grad.abs().sum() > 0)
