"""Control: later layers frozen (requires_grad=False), the optimizer holds only the first layer;
the error still backpropagates through the frozen layers to the first one.

Source: https://discuss.pytorch.org/t/freezing-the-updates-without-freezing-the-gradients/7358
The answer in the thread: frozen parameters get no .grad, the others are unaffected, and the
first layer gets its gradient through the frozen ones.
"""

import torch
from scenario_kit import CLAIMS_NO_ZERO_GRAD, CLAIMS_NONFINITE, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://discuss.pytorch.org/t/freezing-the-updates-without-freezing-the-gradients/7358"
DESCRIPTION = "control: rest/head frozen on purpose, optimizer holds first only; first trains"
ASK = ["first.weight"]
MUST = [[r"frozen", r"requires_grad"]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_NO_ZERO_GRAD,
    r"no gradient (reached|for) first",
    r"first\.weight[^\n]*not in (the|any) optimizer",
]


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.first = nn.Linear(10, 16)
        self.act = nn.Tanh()
        self.rest = nn.Linear(16, 16)
        self.head = nn.Linear(16, 3)

    def forward(self, x):
        return self.head(self.act(self.rest(self.act(self.first(x)))))


def step(watch):
    torch.manual_seed(0)
    model = Net()
    for module in (model.rest, model.head):
        for p in module.parameters():
            p.requires_grad = False
    x, y = torch.randn(32, 10), torch.randint(0, 3, (32,))
    opt = torch.optim.SGD(model.first.parameters(), lr=0.1)
    before = model.first.weight.detach().clone()
    with watch(model) as w:
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
    return Run(w=w, model=model, before=before)


def truth(run):
    m = run.model
    assert m.first.weight.grad is not None and bool(torch.isfinite(m.first.weight.grad).all())
    assert bool(m.first.weight.grad.abs().sum() > 0)
    assert not torch.equal(m.first.weight.detach(), run.before)
    assert m.rest.weight.grad is None and m.head.weight.grad is None
