"""A healthy step people suspect: a classifier trained with soft labels (rows such as ``[0, 0.25,
0.25, 0.5]``) and the cross-entropy ``-sum(y * log(y_hat))``, whose loss does not go to 0.  It
cannot: its minimum over the predictions is the entropy of the targets, reached when ``y_hat =
y`` (``1.0397`` for that row); the loss is that entropy plus ``KL(y || y_hat)``, and training
drives the KL term down.  After 10 SGD steps the loss is well above 0 and still above the entropy
floor, the gradient is finite and nonzero and the step lowers the loss.  Nothing is wrong.

Source: https://torontoai.org/2019/07/22/d-minimum-cost-is-not-zero-when-calculating-cross-entropy-on-soft-labels/
("I am training a neural network using batches of soft labels"; "if the softmax activation
function outputs a list ŷ equal to y (no loss) ... the cross-entropy function is not 0: loss =
-sum(y * log(ŷ)) = 1.0397"; "the more sparse y is, the larger is the minimum possible loss").
Adapted: four clusters of inputs (8 features), each with one of four soft label rows (the post's
two among them), a ``Linear(8, 16)``, ``Tanh``, ``Linear(16, 4)`` classifier, SGD at 0.5, the
watched step after 40 steps.
"""

import torch
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = (
    "https://torontoai.org/2019/07/22/"
    "d-minimum-cost-is-not-zero-when-calculating-cross-entropy-on-soft-labels/"
)
DESCRIPTION = "healthy: soft-label cross-entropy stays above the targets' entropy (not 0): trains"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    r"\bdead\b",
    r"all[- ]zero",
    r"plateau",
    r"not (learning|decreasing)",
]
PRE_STEPS = 10
ROWS = torch.tensor(
    [[0.00, 0.25, 0.25, 0.50], [0.75, 0.00, 0.20, 0.05], [0.25, 0.25, 0.25, 0.25],
     [0.10, 0.70, 0.10, 0.10]]
)  # fmt: skip


def soft_ce(logits, y):
    return -(y * F.log_softmax(logits, dim=1)).sum(1).mean()


def data():
    g = torch.Generator().manual_seed(1)
    cluster = torch.arange(64) % 4
    centers = 2 * torch.randn(4, 8, generator=g)
    x = centers[cluster] + 0.5 * torch.randn(64, 8, generator=g)
    return x, ROWS[cluster]


def step(watch):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 16), nn.Tanh(), nn.Linear(16, 4))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.5)
    x, y = data()
    for _ in range(PRE_STEPS):
        optimizer.zero_grad()
        soft_ce(model(x), y).backward()
        optimizer.step()
    before = [p.detach().clone() for p in model.parameters()]
    with watch(model) as w:
        optimizer.zero_grad()
        loss = soft_ce(model(x), y)
        loss.backward()
        grads = [p.grad.detach().clone() for p in model.parameters()]
        optimizer.step()
    with torch.no_grad():
        after = soft_ce(model(x), y).item()
    return Run(w=w, model=model, x=x, y=y, loss=loss.item(), after=after, grads=grads,
               before=before)  # fmt: skip


def truth(run):
    entropy = float(-(run.y * run.y.clamp_min(1e-12).log()).sum(1).mean())
    first_row = float(-(ROWS[0][1:] * ROWS[0][1:].log()).sum())
    assert abs(first_row - 1.0397) < 1e-4  # the post's number
    assert run.loss > entropy > 0.8  # the floor is the entropy, far from 0
    assert run.after < run.loss  # the step still lowers the loss
    for g, b, p in zip(run.grads, run.before, run.model.parameters(), strict=True):
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0)
        assert not torch.equal(p.detach(), b)
