"""Transfer learning: the optimizer is built for the old classifier head, then the head is
replaced by a new Linear.  The new head gets gradients but no optimizer holds it; the optimizer
holds the old head, which is no longer used.

Source: https://thinbug.com/q/44913720 (the PyTorch-docs recipe "Replace the last
fully-connected layer ... Optimize only the classifier": the optimizer has to be built from
model.fc after the replacement; done in the other order, the new head never trains).
"""

import torch
from scenario_kit import FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://thinbug.com/q/44913720"
DESCRIPTION = "optimizer built for the old fc, fc then replaced: new fc gets .grad, never moves"
ASK = ["fc.weight"]
MUST = [
    [r"\bfc\b"],
    [
        r"not in (the|any) optimizer",
        r"no optimizer",
        r"optimizer (does not|doesn't|did not) (hold|have|contain|update)",
        r"not held",
        r"replaced",
        r"\bold\b",
    ],
]
MUST_NOT = [FALSE_OK]


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(8, 16), nn.ReLU())
        self.fc = nn.Linear(16, 10)

    def forward(self, x):
        return self.fc(self.body(x))


def step(watch):
    torch.manual_seed(0)
    model = Classifier()
    for p in model.body.parameters():
        p.requires_grad = False
    opt = torch.optim.SGD(model.fc.parameters(), lr=0.1, momentum=0.9)
    old_fc = model.fc
    model.fc = nn.Linear(16, 3)  # the new task has 3 classes; replaced after the optimizer
    before = model.fc.weight.detach().clone()
    x, y = torch.randn(32, 8), torch.randint(0, 3, (32,))
    with watch(model) as w:
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
    return Run(w=w, model=model, opt=opt, old_fc=old_fc, before=before)


def truth(run):
    fc = run.model.fc
    held = [p for g in run.opt.param_groups for p in g["params"]]
    assert not any(fc.weight is p for p in held)
    assert any(run.old_fc.weight is p for p in held)
    assert fc.weight.grad is not None and bool(fc.weight.grad.abs().sum() > 0)
    assert torch.equal(fc.weight.detach(), run.before)
    assert run.old_fc.weight.grad is None
