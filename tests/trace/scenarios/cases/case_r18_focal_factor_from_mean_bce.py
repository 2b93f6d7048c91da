"""A multi-label focal loss whose modulating factor is computed from the batch's *mean* binary
cross-entropy: ``bce = nn.BCEWithLogitsLoss()(outputs, targets)`` (reduction mean), ``pt =
exp(-bce)``, ``loss = alpha * (1 - pt) ** gamma * bce``. ``pt`` is one number for the whole batch, so
the factor ``(1 - pt) ** gamma`` weighs every example and label alike: nothing is down-weighted
per example. The loss is a function of the mean BCE only, and its gradient is a positive multiple
of the plain BCE gradient (the focal loss degenerates into BCE with a rescaled learning rate).
Every gradient is finite and nonzero; nothing raises.

Source: https://errorhandle.ai/how-to-handle-class-imbalance-in-multi-label-classification-using-pytorch
("Focal loss down-weights easy examples and focuses training on hard, misclassified ones--great for
imbalanced data. Custom implementation: ... bce_loss = nn.BCEWithLogitsLoss()(outputs, targets); pt
= torch.exp(-bce_loss); return self.alpha * (1 - pt) ** self.gamma * bce_loss"). Adapted: the
page's ``FocalLoss`` (alpha 1, gamma 2) on a tanh MLP with 5 labels, 15% of them positive, SGD.
"""

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = (
    "https://errorhandle.ai/"
    "how-to-handle-class-imbalance-in-multi-label-classification-using-pytorch"
)
DESCRIPTION = "focal loss factor (1 - exp(-mean BCE))^gamma: one scalar, no per-example weighting"
ASK = []
MUST = [
    [
        r"mean[^\n]{0,60}(before|first|then)",
        r"(scalar|single|one)[^\n]{0,40}(factor|weight|modulat\w*|pt\b)",
        r"per[- ](element|example|sample|label)",
        r"reduction\s*=?\s*['\"]?none",
        r"not (down-?weight\w*|per)",
        r"(same|plain|ordinary) (bce|binary cross[- ]entropy)",
    ],
]
MUST_NOT = [FALSE_OK, CLAIMS_NONFINITE]


class FocalLoss(nn.Module):
    def __init__(self, alpha=1, gamma=2):
        super().__init__()
        self.alpha = alpha
        self.gamma = gamma

    def forward(self, outputs, targets):
        bce_loss = nn.BCEWithLogitsLoss()(outputs, targets)
        pt = torch.exp(-bce_loss)
        return self.alpha * (1 - pt) ** self.gamma * bce_loss


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
    out = model(run.x)
    ce = F.binary_cross_entropy_with_logits(out, run.y, reduction="none")
    per_element = ((1 - torch.exp(-ce)) ** 2 * ce).mean()
    focal = torch.autograd.grad(per_element, list(model.parameters()))
    g = flat(run.grads)
    assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0)
    assert float(F.cosine_similarity(g, flat(bce), dim=0)) > 0.9999  # plain BCE, rescaled
    assert float(F.cosine_similarity(flat(focal), flat(bce), dim=0)) < 0.99  # focal differs
