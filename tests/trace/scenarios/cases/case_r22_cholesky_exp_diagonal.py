"""The control of ``cholesky_raw_diagonal_raises``: the same Gaussian fit with the factor's
diagonal written as ``exp`` of an unconstrained parameter (the log of the diagonal), the usual way
to keep a Cholesky factor valid.  The same draw that gave two negative entries now gives three
positive ones, ``MultivariateNormal`` accepts the factor, and the negative log-likelihood's
gradient reaches the mean, the log-diagonal and the off-diagonal entries: every parameter gets a
finite, nonzero gradient and moves.

Source: https://kiwix.haohe.fun/content/wikipedia_en_all_maxi_2024-01/A/LDL_decomposition ("the
Cholesky decomposition ... of a Hermitian, positive-definite matrix into the product of a lower
triangular matrix and its conjugate transpose"; "When A is a real matrix (hence symmetric
positive-definite), the factorization may be written ... where L is a real lower triangular matrix
with positive diagonal entries").  Adapted: the bug's model with ``exp`` on the diagonal, 200
points from a correlated 3-D Gaussian, Adam at 0.05, ``validate_args=True`` written out as in
the bug.
"""

import torch
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK, Run
from torch import nn
from torch.distributions import MultivariateNormal

SOURCE = "https://kiwix.haohe.fun/content/wikipedia_en_all_maxi_2024-01/A/LDL_decomposition"
DESCRIPTION = "control: Cholesky factor with exp(log-diagonal): valid, every parameter trains"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [CLAIMS_NONFINITE, CLAIMS_ERROR, r"all[- ]zero", r"\bzero grad\w*", r"\bdead\b"]
ROWS, COLS = torch.tril_indices(3, 3, offset=-1)


class GaussianFit(nn.Module):
    def __init__(self):
        super().__init__()
        self.mean = nn.Parameter(torch.zeros(3))
        self.log_diag = nn.Parameter(torch.randn(3))
        self.off = nn.Parameter(torch.randn(3))

    def scale_tril(self):
        lower = torch.zeros(3, 3).index_put((ROWS, COLS), self.off)
        return lower + torch.diag_embed(self.log_diag.exp())

    def forward(self, x):
        dist = MultivariateNormal(self.mean, scale_tril=self.scale_tril(), validate_args=True)
        return -dist.log_prob(x).mean()


def data():
    g = torch.Generator().manual_seed(1)
    a = torch.tensor([[1.0, 0.0, 0.0], [0.5, 0.8, 0.0], [-0.3, 0.4, 0.6]])
    return torch.randn(200, 3, generator=g) @ a.T + torch.tensor([1.0, -1.0, 0.5])


def step(watch):
    torch.manual_seed(0)
    model = GaussianFit()
    optimizer = torch.optim.Adam(model.parameters(), lr=0.05)
    x = data()
    before = [p.detach().clone() for p in model.parameters()]
    with watch(model) as w:
        optimizer.zero_grad()
        loss = model(x)
        loss.backward()
        grads = [p.grad.detach().clone() for p in model.parameters()]
        optimizer.step()
    return Run(w=w, model=model, before=before, grads=grads, loss=loss.item())


def truth(run):
    assert bool((run.model.log_diag.detach() < 0).any())  # the raw draw has negatives: exp fixes
    assert torch.isfinite(torch.tensor(run.loss))
    for p, b, g in zip(run.model.parameters(), run.before, run.grads, strict=True):
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0)
        assert not torch.equal(p.detach(), b)
