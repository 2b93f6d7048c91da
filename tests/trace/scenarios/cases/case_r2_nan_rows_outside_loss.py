"""A batch whose last rows are NaN padding goes through a Linear, and the loss uses only the
first rows.  The loss is finite, yet the weight's gradient is NaN: the backward multiplies the
zero gradient of the unused rows by their NaN inputs (0 * NaN = NaN).  The bias is finite.

Source: https://discuss.pytorch.org/t/gradients-contaminated-by-unused-inputs/135053
("x = torch.cat((torch.rand((4, 8)), torch.full((4,8), float('nan'))), dim=0);
x = L(x)[:4].sum(); x.backward() ... The gradients are NaN, although the output does not depend
on the NaN entries"; answered: "nan * 0.0 = nan").
"""

import torch
from scenario_kit import FALSE_OK, Run
from torch import nn

SOURCE = "https://discuss.pytorch.org/t/gradients-contaminated-by-unused-inputs/135053"
DESCRIPTION = "NaN rows in the input, loss on the other rows: L.weight's gradient NaN, loss finite"
ASK = ["L.weight"]
MUST = [
    [r"\bnan\b", r"non-?finite", r"not finite"],
    [r"\binput", r"\bdata\b", r"\bbatch\b", r"\brows?\b", r"already", r"entered", r"fed"],
]
MUST_NOT = [
    FALSE_OK,
    r"non-?finite loss",
    r"loss (is|was) (nan|inf|non-?finite)",
    r"L\.bias[^\n]{0,40}(nan|non-?finite)",
]


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.L = nn.Linear(8, 1)

    def forward(self, x):
        return self.L(x)


def step(watch):
    torch.manual_seed(137)
    model = Net()
    x = torch.cat((torch.rand((4, 8)), torch.full((4, 8), float("nan"))), dim=0)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    with watch(model) as w:
        opt.zero_grad()
        loss = model(x)[:4].sum()
        loss.backward()
    return Run(w=w, model=model, loss=loss.detach())


def truth(run):
    assert bool(torch.isfinite(run.loss))
    assert bool(torch.isnan(run.model.L.weight.grad).all())
    assert bool(torch.isfinite(run.model.L.bias.grad).all())
