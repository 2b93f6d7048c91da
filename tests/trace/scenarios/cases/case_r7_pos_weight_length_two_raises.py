"""An imbalanced binary classifier with one logit per example, trained with
``nn.BCEWithLogitsLoss(pos_weight=...)`` where ``pos_weight`` holds one weight per class of a
two-class problem (length 2).  ``pos_weight`` is broadcast against the (16,) logits and the loss
raises "The size of tensor a (2) must match the size of tensor b (16) at non-singleton dimension
0" before any backward.

Source: https://discuss.pytorch.org/t/weighted-bce-loss-with-logits/150134 ("In my case I have two
classes. However, when I pass a vector with a length equal to 2, the following error comes:
RuntimeError: The size of tensor a (2) must match the size of tensor b (16)"; "pred shape:
torch.Size([16]) labels torch.Size([16]) weights tensor([1.1734, 6.76...])").
"""

import torch
from scenario_kit import FALSE_OK, Run
from torch import nn

SOURCE = "https://discuss.pytorch.org/t/weighted-bce-loss-with-logits/150134"
DESCRIPTION = "BCEWithLogitsLoss pos_weight of length 2 on (16,) logits: the loss raises"
ASK = []
MUST = [
    [r"\braised\b", r"RuntimeError", r"exception", r"\berror\b"],
    [
        r"pos_weight",
        r"size of tensor",
        r"must match",
        r"binary_cross_entropy_with_logits",
        r"BCEWithLogits",
    ],
]
MUST_NOT = [FALSE_OK]


def step(watch, pos_weight=(1.1734028683181226, 6.7669172932330826)):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(12, 16), nn.ReLU(), nn.Linear(16, 1))
    g = torch.Generator().manual_seed(1)
    x = torch.randn(16, 12, generator=g)
    label = (torch.rand(16, generator=g) < 0.15).float()  # few positives
    criterion = nn.BCEWithLogitsLoss(pos_weight=torch.tensor(pos_weight))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    before = [p.detach().clone() for p in model.parameters()]
    error = None
    try:
        with watch(model) as w:
            opt.zero_grad()
            pred = model(x).squeeze(1)  # (16,)
            loss = criterion(pred, label)
            loss.backward()
            opt.step()
    except RuntimeError as e:
        error = e
    return Run(w=w, model=model, error=error, before=before, label=label)


def truth(run):
    assert run.error is not None and "must match the size of tensor b (16)" in str(run.error)
    for p, b in zip(run.model.parameters(), run.before, strict=True):
        assert p.grad is None and torch.equal(p.detach(), b)
