"""Control: a binary classifier trained with the focal loss written on top of
``binary_cross_entropy_with_logits`` (``(1 - p_t) ** gamma * CE``, gamma 2, alpha 0.25): the
loss is finite and every parameter gets a finite, nonzero gradient.

Source: https://github.com/semilleroCV/deep-learning-notes (a notebook's "torch implementation"
of the focal loss, ``focal_loss = (1-p_t)^{gamma} * CE(p_t)`` with
``F.binary_cross_entropy_with_logits``).
"""

import torch
from scenario_kit import CLAIMS_NONFINITE, HEALTHY_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://github.com/semilleroCV/deep-learning-notes"
DESCRIPTION = "control: focal loss over BCE-with-logits (gamma 2, alpha 0.25), one SGD step"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [CLAIMS_NONFINITE]


def focal_loss(logits, targets, alpha=0.25, gamma=2.0):
    ce = F.binary_cross_entropy_with_logits(logits, targets, reduction="none")
    p = torch.sigmoid(logits)
    p_t = p * targets + (1 - p) * (1 - targets)
    alpha_t = alpha * targets + (1 - alpha) * (1 - targets)
    return (alpha_t * (1 - p_t) ** gamma * ce).mean()


def step(watch):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Linear(32, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    g = torch.Generator().manual_seed(1)
    x = torch.randn(64, 10, generator=g)
    y = (torch.rand(64, 1, generator=g) < 0.2).float()  # imbalanced, as focal loss is for
    with watch(model) as w:
        opt.zero_grad()
        loss = focal_loss(model(x), y)
        loss.backward()
        opt.step()
    return Run(w=w, model=model, loss=loss.item())


def truth(run):
    assert run.loss == run.loss and run.loss < float("inf")
    for p in run.model.parameters():
        assert p.grad is not None and bool(torch.isfinite(p.grad).all())
        assert bool(p.grad.abs().sum() > 0)
