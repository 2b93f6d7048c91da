"""Gradual unfreezing: stage one trains only the head, the backbone frozen, with an optimizer
built from ``filter(lambda p: p.requires_grad, model.parameters())``; stage two unfreezes the last
backbone layer with ``requires_grad = True`` but keeps the stage-one optimizer.  The unfrozen layer
now gets gradients every step, and no optimizer holds it: it never moves.

Source: https://www.codegenes.net/blog/gradual-unfreezing-pytorch ("Unfreeze more layers in the
next stage: for param in model.layer4.parameters(): param.requires_grad = True"; "# Update the
optimizer to include the newly unfrozen parameters").
"""

import torch
from scenario_kit import FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://www.codegenes.net/blog/gradual-unfreezing-pytorch"
DESCRIPTION = "layer unfrozen for stage two, stage-one optimizer kept: it gets .grad, never moves"
ASK = ["layer4.weight"]
MUST = [
    [r"optimizer"],
    [
        r"not (held|in (the|any) optimizer)",
        r"no optimizer",
        r"(does not|doesn't|did not) hold",
        r"holds? none",
        r"never (moved|updated|stepped)",
        r"did not (move|change)",
        r"not (updated|optimi[sz]ed|stepped)",
    ],
]
MUST_NOT = [FALSE_OK]


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer3 = nn.Sequential(nn.Linear(10, 32), nn.ReLU())
        self.layer4 = nn.Linear(32, 32)
        self.fc = nn.Linear(32, 3)

    def forward(self, x):
        return self.fc(F.relu(self.layer4(self.layer3(x))))


def step(watch, rebuild: bool = False):
    torch.manual_seed(0)
    model = Net()
    g = torch.Generator().manual_seed(1)
    batches = [
        (torch.randn(16, 10, generator=g), torch.randint(0, 3, (16,), generator=g))
        for _ in range(2)
    ]
    for p in model.parameters():  # stage one: everything frozen but the head
        p.requires_grad = False
    for p in model.fc.parameters():
        p.requires_grad = True
    opt = torch.optim.SGD(
        filter(lambda p: p.requires_grad, model.parameters()), lr=0.01, momentum=0.9
    )
    x, y = batches[0]
    opt.zero_grad()
    F.cross_entropy(model(x), y).backward()
    opt.step()
    for p in model.layer4.parameters():  # stage two: unfreeze layer4
        p.requires_grad = True
    if rebuild:
        opt = torch.optim.SGD(
            filter(lambda p: p.requires_grad, model.parameters()), lr=0.001, momentum=0.9
        )
    before = {n: p.detach().clone() for n, p in model.named_parameters()}
    x, y = batches[1]
    with watch(model) as w:
        opt.zero_grad()
        F.cross_entropy(model(x), y).backward()
        opt.step()
    return Run(w=w, model=model, opt=opt, before=before)


def held(opt):
    return {id(p) for group in opt.param_groups for p in group["params"]}


def truth(run):
    ids = held(run.opt)
    for n, p in run.model.layer4.named_parameters():
        assert p.grad is not None and bool(p.grad.abs().sum() > 0), n
        assert id(p) not in ids and torch.equal(p.detach(), run.before["layer4." + n]), n
    assert not torch.equal(run.model.fc.weight.detach(), run.before["fc.weight"])
