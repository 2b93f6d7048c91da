"""A small hypernetwork computes the target layer's weight, and the forward installs it with
target.weight.data = hyper(z).view(...): .data copies the values and drops the graph, so the
hypernetwork, which ran, gets no gradient and never trains; only the target layer's own
parameter does.

Source: https://prodissertation.co.uk/post/set-torch-nn-parameters-data-including-the-gradient
("Set torch.nn.Parameter's data, including the gradient": "param.data = c ...
print(param.data.grad_fn) # Output: None ... assigning it directly to param.data results in
param.data losing its gradient information").
"""

import torch
from scenario_kit import FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://prodissertation.co.uk/post/set-torch-nn-parameters-data-including-the-gradient"
DESCRIPTION = "target.weight.data = hyper(z): hyper runs, gets no gradient"
ASK = ["hyper.weight"]
MUST = [
    [r"\bhyper\b"],
    [
        r"\.data\b",
        r"no gradient",
        r"\bNone\b",
        r"not (reach|connected|part)",
        r"did not reach",
        r"never reached",
        r"\bcut\b",
        r"detach",
        r"unused",
        r"not used",
    ],
]
MUST_NOT = [FALSE_OK, r"'?hyper'?[^\n]*(was )?never called"]


class HyperNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.z = nn.Parameter(torch.randn(4))
        self.hyper = nn.Linear(4, 6)
        self.target = nn.Linear(3, 2)

    def forward(self, x):
        self.target.weight.data = self.hyper(self.z).view(2, 3)  # the bug
        return self.target(x)


def step(watch):
    torch.manual_seed(0)
    model = HyperNet()
    x, y = torch.randn(16, 3), torch.randn(16, 2)
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    before = model.hyper.weight.detach().clone()
    with watch(model) as w:
        opt.zero_grad()
        loss = F.mse_loss(model(x), y)
        loss.backward()
        opt.step()
    return Run(w=w, model=model, before=before)


def truth(run):
    m = run.model
    assert m.hyper.weight.grad is None and m.hyper.bias.grad is None and m.z.grad is None
    assert m.target.weight.grad is not None and bool((m.target.weight.grad != 0).any())
    assert torch.equal(m.hyper.weight.detach(), run.before)
