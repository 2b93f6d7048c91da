"""The control of ``barlow_l2_normalized_embeddings``: Barlow Twins as the paper's pseudocode has
it, each embedding unit standardised along the batch (mean 0, standard deviation 1 over the 64
examples, the affine-free batch normalisation) before ``C = z_a.T @ z_b / N``.  ``C`` is then the
units' cross-correlation matrix, each diagonal entry lies in ``[-1, 1]`` and can reach 1, and the
two views of the same points start with a trace well above 1.  The projector's last ``Linear`` has
no bias, as in the paper (a bias before the standardisation would get no gradient).  Every
gradient is finite and nonzero.

Source: https://maxim.bonnaerens.com/mlrf/barlow_twins/ (``\\mathcal{C}_{ij} = \\frac{\\sum_b
\\mathbf{z}^A_{b,i} \\mathbf{z}^B_{b,j}}{\\sqrt{\\sum_b (\\mathbf{z}^A_{b,i})^2}\\sqrt{\\sum_b
(\\mathbf{z}^B_{b,j})^2}}``; "Barlow Twins's objective function measures the cross-correlation
matrix between the embeddings of two identical networks fed with distorted versions of a batch
of samples, and tries to make this matrix close to the identity").  Adapted: the bug's encoder,
views and ``lambda``, SGD at 0.05; the standardisation written out.
"""

import torch
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK, Run
from torch import nn

SOURCE = "https://maxim.bonnaerens.com/mlrf/barlow_twins/"
DESCRIPTION = "control: Barlow Twins, units standardised along the batch: C a correlation matrix"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [CLAIMS_NONFINITE, CLAIMS_ERROR, r"all[- ]zero", r"\bzero grad\w*", r"\bdead\b"]
D, LAMBDA = 8, 5e-3


def barlow_loss(c):
    on_diag = (1 - torch.diagonal(c)).pow(2).sum()
    off_diag = (c - torch.diag(torch.diagonal(c))).pow(2).sum()
    return on_diag + LAMBDA * off_diag, on_diag


def standardize(z):
    return (z - z.mean(0)) / z.std(0, unbiased=False)


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
        z_a = standardize(model(view_a))
        z_b = standardize(model(view_b))
        c = z_a.T @ z_b / len(z_a)
        loss, on_diag = barlow_loss(c)
        loss.backward()
        grads = [p.grad.detach().clone() for p in model.parameters()]
        optimizer.step()
    return Run(w=w, model=model, c=c.detach(), z_a=z_a.detach(), on_diag=on_diag.item(),
               grads=grads)  # fmt: skip


def truth(run):
    assert float(run.z_a.mean(0).abs().max()) < 1e-5
    assert torch.allclose(run.z_a.std(0, unbiased=False), torch.ones(D), atol=1e-4)
    diag = torch.diagonal(run.c)
    assert float(diag.abs().max()) <= 1 + 1e-5  # correlations
    assert float(diag.sum()) > 4  # the views agree: well above the bug's ceiling of 1
    for g in run.grads:
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0)
