"""Control: torch.max over features used by value (not the index): gradient flows back to the
element that won, so every parameter gets a gradient.

Source: https://huggingface.co/datasets/nvidia/Nemotron-CC-Math-v1 (copy of the PyTorch forum
thread "Confused about torch.max() and gradient": "max is continuous everywhere ... backpropagation
is feasible with max but not with argmax").
"""

import torch
from scenario_kit import CLAIMS_NONFINITE, HEALTHY_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://huggingface.co/datasets/nvidia/Nemotron-CC-Math-v1 (forum thread 'Confused about torch.max() and gradient')"
DESCRIPTION = "control: max values (not argmax) between layers; first gets its gradient"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [CLAIMS_NONFINITE, r"first[^\n]*(no gradient|\bNone\b)", r"argmax"]


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.first = nn.Linear(8, 5)
        self.head = nn.Linear(1, 2)

    def forward(self, x):
        best, _ = self.first(x).max(1, keepdim=True)
        return self.head(best)


def step(watch):
    torch.manual_seed(0)
    model = Net()
    x, y = torch.randn(64, 8), torch.randint(0, 2, (64,))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    with watch(model) as w:
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
    return Run(w=w, model=model)


def truth(run):
    for p in run.model.parameters():
        assert p.grad is not None and bool(torch.isfinite(p.grad).all())
        assert bool(p.grad.abs().sum() > 0)
