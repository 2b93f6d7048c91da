"""Control: an ordinary step that logs ``loss.detach()`` after the backward (the pull request
that added it was reverted as unnecessary; it is harmless).

Source: https://github.com/pytorch/examples/pull/731 ("loss detach" -- "This doesn't do
anything... the detach() is unnecessary"), reverted in pytorch/examples#758.
"""

import torch
from scenario_kit import CLAIMS_NONFINITE, HEALTHY_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://github.com/pytorch/examples/pull/731"
DESCRIPTION = "control: running_loss += loss.detach() after backward; nothing wrong"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [CLAIMS_NONFINITE, r"no gradient", r"detach\w*[^\n]*(cut|stopp|no gradient|block)"]


def step(watch):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 3))
    x, y = torch.randn(32, 8), torch.randint(0, 3, (32,))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    running = torch.zeros(())
    with watch(model) as w:
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        running = running + loss.detach()
    return Run(w=w, model=model, running=running)


def truth(run):
    assert not run.running.requires_grad
    for p in run.model.parameters():
        assert p.grad is not None and bool(torch.isfinite(p.grad).all())
        assert bool(p.grad.abs().sum() > 0)
