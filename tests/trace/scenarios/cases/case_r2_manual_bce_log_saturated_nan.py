"""Binary cross-entropy written by hand on sigmoid(logits): for confident examples the sigmoid
rounds to exactly 1.0 in float32, and (1 - y) * log(1 - p) is 0 * log(0) = 0 * -inf = NaN.
The loss is NaN and so are the gradients; the model's output (the logits) is finite, the NaN is
made in the loss.

Source: https://www.iiask.com/34l57025.html ("如何解决PyTorch中BCELoss计算时输出NaN值的问题?":
"当p→0或p→1时,log运算会产生无限大的梯度值,这是NaN产生的根本原因"; the fixes: clamp the
prediction, or BCEWithLogitsLoss).
"""

import torch
from scenario_kit import FALSE_OK, Run
from torch import nn

SOURCE = "https://www.iiask.com/34l57025.html"
DESCRIPTION = "hand-written BCE: sigmoid output exactly 1.0, 0 * log(0) = NaN in the loss"
ASK = ["head.weight"]
MUST = [
    [r"\bnan\b", r"non-?finite", r"not finite"],
    [r"\bloss\b", r"\blog\b", r"after the model", r"outside", r"output"],
]
MUST_NOT = [
    FALSE_OK,
    (
        r"(made|produced|created|introduced|originat\w*|starts?|first)\W+(\w+\W+){0,3}"
        r"(in|by|at)\s+(module\s+)?'?(body|head)'?\b"
    ),
]


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Linear(4, 8)
        self.head = nn.Linear(8, 1)

    def forward(self, x):
        return self.head(torch.tanh(self.body(x)))  # logits


def _batch():
    torch.manual_seed(1)
    x = torch.randn(16, 4)
    y = (torch.rand(16, 1) > 0.5).float()
    return x, y


def _confident(model):
    with torch.no_grad():  # a model that has become very confident (large head weights)
        model.head.weight.mul_(60.0)
        model.head.bias.fill_(25.0)


def step(watch):
    torch.manual_seed(0)
    model = Net()
    _confident(model)
    x, y = _batch()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    with watch(model) as w:
        opt.zero_grad()
        p = torch.sigmoid(model(x))
        loss = -(y * torch.log(p) + (1 - y) * torch.log(1 - p)).mean()
        loss.backward()
    return Run(w=w, model=model, p=p.detach(), y=y, loss=loss.detach())


def truth(run):
    assert bool(torch.isfinite(run.p).all())
    assert bool(((run.p == 1.0) & (run.y == 1.0)).any())  # 0 * log(1 - 1) = 0 * -inf
    assert bool(torch.isnan(run.loss))
    assert bool(torch.isnan(run.model.head.weight.grad).any())
