"""Control: the multi-label focal loss with its modulating factor computed per element: ``bce =
binary_cross_entropy_with_logits(..., reduction='none')``, ``pt = exp(-bce)``, ``loss = (alpha * (1
- pt) ** gamma * bce).mean()``. Each example's and label's term is weighted by its own ``(1 -
pt) ** gamma``: confident (easy) entries are down-weighted, so the gradient is not a multiple of the
plain BCE gradient. Every gradient is finite and nonzero.

Source: https://errorhandle.ai/how-to-handle-class-imbalance-in-multi-label-classification-using-pytorch
("In multi-label classification, each label is treated independently"; "Focal loss down-weights
easy examples and focuses training on hard, misclassified ones--great for imbalanced data").
Adapted: the page's ``FocalLoss`` (alpha 1, gamma 2) with ``reduction='none'`` before the factor, on
a tanh MLP with 5 labels, 15% of them positive, SGD.
"""

import torch
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = (
    "https://errorhandle.ai/"
    "how-to-handle-class-imbalance-in-multi-label-classification-using-pytorch"
)
DESCRIPTION = (
    "control: focal loss with a per-element factor (reduction='none'): easy ones weigh less"
)
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [CLAIMS_NONFINITE, CLAIMS_ERROR]


class FocalLoss(nn.Module):
    def __init__(self, alpha=1, gamma=2):
        super().__init__()
        self.alpha = alpha
        self.gamma = gamma

    def forward(self, outputs, targets):
        bce_loss = F.binary_cross_entropy_with_logits(outputs, targets, reduction="none")
        pt = torch.exp(-bce_loss)
        return (self.alpha * (1 - pt) ** self.gamma * bce_loss).mean()


def make_model():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(12, 32), nn.Tanh(), nn.Linear(32, 5))


def data():
    g = torch.Generator().manual_seed(1)
    x = torch.randn(64, 12, generator=g)
    return x, (torch.rand(64, 5, generator=g) < 0.15).float()


def step(watch):
    model = make_model()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    criterion = FocalLoss()
    x, y = data()
    with watch(model) as w:
        optimizer.zero_grad()
        loss = criterion(model(x), y)
        loss.backward()
        grads = [p.grad.detach().clone() for p in model.parameters()]
        optimizer.step()
    return Run(w=w, x=x, y=y, grads=grads)


def flat(gs):
    return torch.cat([g.flatten() for g in gs])


def truth(run):
    model = make_model()
    bce = torch.autograd.grad(
        F.binary_cross_entropy_with_logits(model(run.x), run.y), list(model.parameters())
    )
    g = flat(run.grads)
    assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0)
    assert all(bool(t.abs().sum() > 0) for t in run.grads)
    assert float(F.cosine_similarity(g, flat(bce), dim=0)) < 0.99  # weighted per element
