"""Control: multi-label classification (5 labels per example, several may be on) with
``BCEWithLogitsLoss(pos_weight=...)``, ``pos_weight`` a vector of one ratio per class, negatives
over positives counted on the batch, as the documentation describes ("if a dataset contains 100
positive and 300 negative examples of a single class, then pos_weight for the class should be
equal to 300/100 = 3"); logits and targets both ``(N, 5)``.  A healthy step.

Source: https://pytorch.org/docs/2.3/generated/torch.nn.BCEWithLogitsLoss.html (a documentation
page: "pos_weight tensor's elements correspond to the 64 distinct classes in a multi-label binary
classification scenario").
"""

import torch
from scenario_kit import CLAIMS_NONFINITE, HEALTHY_OK, Run
from torch import nn

SOURCE = "https://pytorch.org/docs/2.3/generated/torch.nn.BCEWithLogitsLoss.html"
DESCRIPTION = "control: multi-label BCEWithLogitsLoss, pos_weight = negatives / positives per class"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [CLAIMS_NONFINITE, r"broadcast", r"pos_weight[^\n]*(shape|wrong|length)"]


def step(watch):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(12, 32), nn.ReLU(), nn.Linear(32, 5))
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    g = torch.Generator().manual_seed(1)
    x = torch.randn(64, 12, generator=g)
    rates = torch.tensor([0.5, 0.3, 0.1, 0.2, 0.05])
    targets = (torch.rand(64, 5, generator=g) < rates).float()
    positives = targets.sum(0).clamp(min=1)
    pos_weight = (targets.shape[0] - positives) / positives
    criterion = nn.BCEWithLogitsLoss(pos_weight=pos_weight)
    with watch(model) as w:
        optimizer.zero_grad()
        logits = model(x)
        loss = criterion(logits, targets)
        loss.backward()
        optimizer.step()
    return Run(
        w=w,
        logits_shape=tuple(logits.shape),
        targets=targets,
        pos_weight=pos_weight,
        loss=loss.item(),
    )


def truth(run):
    assert run.logits_shape == tuple(run.targets.shape) == (64, 5)
    assert run.pos_weight.shape == (5,) and float(run.pos_weight.max()) > 3
    assert torch.isfinite(torch.tensor(run.loss))
