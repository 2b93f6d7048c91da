"""A layer frozen with requires_grad=False after some steps keeps moving: its .grad is a zero
tensor, not None, and SGD's momentum and weight decay still update it.

Source: https://discuss.pytorch.org/t/why-there-is-still-a-small-change-in-frozen-layer-parameters/153740
The poster froze fc1 between steps and saw its weights change; the fix was to also set
``param.grad = None``.
"""

import torch
from scenario_kit import FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://discuss.pytorch.org/t/why-there-is-still-a-small-change-in-frozen-layer-parameters/153740"
DESCRIPTION = "fc1 frozen after a step; zero .grad kept; momentum + weight decay still move it"
ASK = ["fc1.weight"]
MUST = [
    [r"fc1"],
    [r"moved", r"chang", r"momentum", r"weight.decay", r"still", r"optimizer state"],
]
MUST_NOT = [FALSE_OK, r"fc1\.weight[^\n]*(did not|does not|didn't|will not|won't) (move|change)"]


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(10, 16)
        self.act = nn.ReLU()
        self.fc2 = nn.Linear(16, 3)

    def forward(self, x):
        return self.fc2(self.act(self.fc1(x)))


def step(watch):
    torch.manual_seed(0)
    model = Net()
    x, y = torch.randn(32, 10), torch.randint(0, 3, (32,))
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, weight_decay=1e-2)
    opt.zero_grad(set_to_none=False)
    F.cross_entropy(model(x), y).backward()
    opt.step()
    for p in model.fc1.parameters():
        p.requires_grad = False
    before = model.fc1.weight.detach().clone()
    with watch(model) as w:
        opt.zero_grad(set_to_none=False)
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
    return Run(w=w, model=model, opt=opt, before=before)


def truth(run):
    fc1 = run.model.fc1
    assert not fc1.weight.requires_grad
    assert fc1.weight.grad is not None and bool((fc1.weight.grad == 0).all())
    assert any(fc1.weight is p for g in run.opt.param_groups for p in g["params"])
    assert not torch.equal(fc1.weight.detach(), run.before)  # it moved although frozen
