"""An auxiliary loss added as ``target_loss.detach().item()``: it changes the printed loss but
contributes no gradient; the auxiliary head, used only by that term, gets none.

Source: https://github.com/somuchtome/SimAC/issues/3 ("loss = loss + target_loss.detach().item()
I cant understand why using the detach").
"""

import torch
from scenario_kit import FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://github.com/somuchtome/SimAC/issues/3"
DESCRIPTION = "aux loss added as .detach().item(): aux head gets no gradient"
ASK = ["aux.weight"]
MUST = [
    [r"\baux\b"],
    [
        r"no gradient",
        r"\bNone\b",
        r"detach",
        r"\.item",
        r"\bcut\b",
        r"not (reach|connected|part)",
        r"did not reach",
        r"never reached",
    ],
]
MUST_NOT = [FALSE_OK, r"'?aux'?[^\n]*never called"]


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Sequential(nn.Linear(8, 16), nn.ReLU())
        self.head = nn.Linear(16, 3)
        self.aux = nn.Linear(16, 1)

    def forward(self, x):
        h = self.backbone(x)
        return self.head(h), self.aux(h)


def step(watch):
    torch.manual_seed(0)
    model = Net()
    x, y, t = torch.randn(16, 8), torch.randint(0, 3, (16,)), torch.randn(16, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    with watch(model) as w:
        opt.zero_grad()
        logits, aux = model(x)
        loss = F.cross_entropy(logits, y)
        target_loss = F.mse_loss(aux, t)
        loss = loss + target_loss.detach().item()
        loss.backward()
        opt.step()
    return Run(w=w, model=model)


def truth(run):
    assert run.model.aux.weight.grad is None and run.model.aux.bias.grad is None
    assert run.model.head.weight.grad is not None
