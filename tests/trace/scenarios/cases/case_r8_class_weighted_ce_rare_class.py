"""Control: an imbalanced three-class batch (26, 4 and 2 examples) and ``nn.CrossEntropyLoss``
given class weights from inverse frequencies, normalised to sum to the number of classes.  The
rare classes' examples weigh 6.5 and 13 times the common one's; with ``reduction='mean'`` the loss
is the weighted sum divided by the sum of the weights of the batch's targets (not by the batch
size), as documented.  One SGD step: every gradient finite and nonzero, nothing wrong.

Source: https://www.889521.com/questions/66976.html ("How to use the weight of Pytorch's
nn.CrossEntropyLoss ()?": "A common practice is to compute weight = 1.0 / class_frequencies,
followed by optional normalization, and then pass it to the loss function constructor";
"excessive weighting can lead to instability").
"""

import torch
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://www.889521.com/questions/66976.html"
DESCRIPTION = "control: CrossEntropyLoss(weight=inverse class frequency), imbalanced batch"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [CLAIMS_NONFINITE, CLAIMS_ERROR, r"broadcast", r"log-?probabilit", r"explod"]


def step(watch):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(6, 24), nn.ReLU(), nn.Linear(24, 3))
    g = torch.Generator().manual_seed(1)
    x = torch.randn(32, 6, generator=g)
    y = torch.tensor([0] * 26 + [1] * 4 + [2] * 2)
    counts = torch.bincount(y, minlength=3).float()
    weight = 1.0 / counts
    weight = weight / weight.sum() * 3
    criterion = nn.CrossEntropyLoss(weight=weight)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    with watch(model) as w:
        opt.zero_grad()
        logits = model(x)
        loss = criterion(logits, y)
        loss.backward()
        grads = {n: p.grad.clone() for n, p in model.named_parameters()}
        opt.step()
    per_example = F.cross_entropy(logits.detach(), y, reduction="none")
    return Run(w=w, loss=loss.item(), per_example=per_example, weight=weight, y=y, grads=grads)


def truth(run):
    wy = run.weight[run.y]
    expected = (wy * run.per_example).sum() / wy.sum()  # normalised by the weights, not by 32
    assert abs(run.loss - expected.item()) < 1e-5
    assert abs(run.loss - run.per_example.mean().item()) > 1e-3  # differs from the plain mean
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
