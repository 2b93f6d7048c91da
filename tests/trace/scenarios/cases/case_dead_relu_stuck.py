"""Every ReLU unit of the hidden layer is off for every example: the layer before gets zero.

Source: https://discuss.pytorch.org/t/cross-entropy-loss-is-not-decreasing/43814/16
The thread: cross-entropy stuck at 2.30; the poster found the parameters "almost all negative,
and their derivatives are all zero" behind the ReLUs.  Here a large step has pushed fc1's bias
far negative, so ReLU outputs 0 for all 64 examples and fc1 gets an all-zero gradient.
"""

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://discuss.pytorch.org/t/cross-entropy-loss-is-not-decreasing/43814/16"
DESCRIPTION = "all 32 ReLU units dead on all 64 examples; fc1 gets an all-zero gradient"
ASK = ["fc1.weight"]
MUST = [
    [r"dead", r"inactive", r"never (active|fire|on)", r"zero for (every|all)", r"always (0|zero)"],
    [r"fc1", r"\brelu\b"],
]
MUST_NOT = [FALSE_OK, CLAIMS_NONFINITE, r"no gradient reached fc1"]


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(10, 32)
        self.relu = nn.ReLU()
        self.fc2 = nn.Linear(32, 3)

    def forward(self, x):
        return self.fc2(self.relu(self.fc1(x)))


def step(watch):
    torch.manual_seed(0)
    model = Net()
    with torch.no_grad():
        model.fc1.bias.fill_(-50.0)
    x, y = torch.randn(64, 10), torch.randint(0, 3, (64,))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    with watch(model) as w:
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
    return Run(w=w, model=model, x=x)


def truth(run):
    m = run.model
    with torch.no_grad():
        hidden = m.relu(m.fc1(run.x))
    assert hidden.shape == (64, 32) and bool((hidden == 0).all())
    assert m.fc1.weight.grad is not None and bool((m.fc1.weight.grad == 0).all())
    assert bool((m.fc1.bias.grad == 0).all())
    assert bool(m.fc2.bias.grad.abs().sum() > 0)
