"""Barlow Twins written with a SimCLR habit: the two views' embeddings are L2-normalised per example
(``F.normalize(z, dim=1)``) before the cross-correlation ``C = z_a.T @ z_b / N``, instead of being
standardised along the batch.  With unit-norm rows, ``trace(C) = mean_b <z_a[b], z_b[b]> <= 1``: the
8 diagonal entries that the invariance term pulls towards 1 can sum to at most 1, so that term alone
is at least ``(D - 1)^2 / D = 6.125`` for ``D = 8`` whatever the weights, and its gradient fights
the normalisation at every step.  Every gradient is finite and nonzero; nothing raises.

Source: https://www.gitmemories.com/Project-MONAI/MONAI/issues/7530 ("Add Barlow Twins loss"; "there
is no l2-normalisation, but rather a z-normalisation"; ``\\mathcal{L}_{BT} := \\sum_i (1 -
\\mathcal{C}_{ii})^2 + \\lambda \\sum_i \\sum_{i\\neq j} \\mathcal{C}_{ij}^2``).  Adapted: an
encoder ``Linear(12, 32)``, ``Tanh``, ``Linear(32, 8, bias=False)``, two views of 64 points (each
plus noise of 0.1), ``lambda = 5e-3``, SGD at 0.05.
"""

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://www.gitmemories.com/Project-MONAI/MONAI/issues/7530"
DESCRIPTION = "Barlow Twins on L2-normalised rows: trace(C) <= 1, invariance term >= 6.125"
ASK = []
MUST = [
    [
        r"l2[- ]?normali[sz]\w*",
        r"F\.normalize",
        r"unit[- ]norm",
        r"normali[sz]\w* (each |per )?(row|example|sample|embedding)",
        r"normali[sz]\w* (along|over|across) (the )?(feature|embedding|dim(ension)?\s*=?\s*1)",
    ],
    [
        r"batch[- ]?(norm|normali[sz]\w*|standardi[sz]\w*)",
        r"z[- ]?(score|normali[sz]\w*)",
        r"standardi[sz]\w*",
        r"trace",
        r"diagonal[^\n]{0,60}(1|one)",
        r"cannot (reach|be)",
        r"(floor|lower bound)",
    ],
]
MUST_NOT = [FALSE_OK, CLAIMS_NONFINITE, r"all[- ]zero", r"\bzero grad\w*"]
D, LAMBDA = 8, 5e-3


def barlow_loss(c):
    on_diag = (1 - torch.diagonal(c)).pow(2).sum()
    off_diag = (c - torch.diag(torch.diagonal(c))).pow(2).sum()
    return on_diag + LAMBDA * off_diag, on_diag


def data():
    g = torch.Generator().manual_seed(1)
    x = torch.randn(64, 12, generator=g)
    return x + 0.1 * torch.randn(64, 12, generator=g), x + 0.1 * torch.randn(64, 12, generator=g)


def step(watch):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(12, 32), nn.Tanh(), nn.Linear(32, D, bias=False))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    view_a, view_b = data()
    with watch(model) as w:
        optimizer.zero_grad()
        z_a = F.normalize(model(view_a), dim=1)  # per example, as for a cosine similarity
        z_b = F.normalize(model(view_b), dim=1)
        c = z_a.T @ z_b / len(z_a)
        loss, on_diag = barlow_loss(c)
        loss.backward()
        grads = [p.grad.detach().clone() for p in model.parameters()]
        optimizer.step()
    return Run(w=w, model=model, c=c.detach(), z_a=z_a.detach(), on_diag=on_diag.item(),
               grads=grads)  # fmt: skip


def truth(run):
    assert torch.allclose(run.z_a.norm(dim=1), torch.ones(len(run.z_a)), atol=1e-5)
    assert float(torch.diagonal(run.c).sum()) <= 1 + 1e-5  # trace(C) <= 1 with unit rows
    assert run.on_diag >= (D - 1) ** 2 / D - 1e-4  # the invariance term's floor
    for g in run.grads:
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0)
