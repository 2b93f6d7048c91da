"""Meant to freeze the backbone and train a new head, ``model.requires_grad_(False)`` is called
on the whole model after the head was put in: nothing in the model requires grad, the loss has
no graph, and ``loss.backward()`` raises inside the block.

Source: https://runebook.dev/en/docs/pytorch/generated/torch.nn.module/torch.nn.Module.requires_grad_
("A common mistake is accidentally freezing the entire model when you only meant to freeze a
specific part, like the pre-trained backbone of a model"; "You mistakenly call
model.requires_grad_(False) on the entire model. The whole network is now frozen and won't
learn anything").
"""

import torch
from scenario_kit import FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = (
    "https://runebook.dev/en/docs/pytorch/generated/torch.nn.module/torch.nn.Module.requires_grad_"
)
DESCRIPTION = "model.requires_grad_(False) on the whole model, head included: backward raises"
ASK = []
MUST = [
    [r"\braised\b", r"exception", r"\berror\b", r"RuntimeError", r"does not require grad"],
    [r"requires_grad", r"frozen", r"freez", r"(no|none of the) parameters? (requires?|need)"],
]
MUST_NOT = [FALSE_OK]


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 32), nn.ReLU())
        self.fc = nn.Linear(32, 5)

    def forward(self, x):
        return self.fc(self.backbone(x))


def step(watch, whole=True):
    torch.manual_seed(0)
    model = Net()
    model.fc = nn.Linear(32, 10)  # the new classification head
    if whole:
        model.requires_grad_(False)  # meant: the backbone only
    else:
        model.backbone.requires_grad_(False)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    g = torch.Generator().manual_seed(1)
    x, y = torch.randn(16, 16, generator=g), torch.randint(0, 10, (16,), generator=g)
    before = {n: p.detach().clone() for n, p in model.named_parameters()}
    error = None
    try:
        with watch(model) as w:
            opt.zero_grad()
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            opt.step()
    except RuntimeError as e:
        error = e
    return Run(w=w, model=model, error=error, before=before)


def truth(run):
    assert run.error is not None and "does not require grad" in str(run.error)
    assert not any(p.requires_grad for p in run.model.parameters())
    assert all(p.grad is None for p in run.model.parameters())
