"""A full-covariance Gaussian fitted by maximum likelihood through a Cholesky factor whose diagonal
is a raw parameter, initialised like the off-diagonal entries (``torch.randn``).  A Cholesky factor
must have a positive diagonal; two of the three entries start negative, and
``MultivariateNormal(mean, scale_tril=L)`` validates its argument: it raises ``ValueError: Expected
parameter scale_tril ... to satisfy the constraint LowerCholesky(), but found invalid values`` in
the forward.  No backward runs: every ``.grad`` stays ``None`` and nothing moves.

Source: https://discourse.mc-stan.org/t/matrix-k-k-vs-cholesky-factor-cov-k/22695
(``cholesky_factor_cov[K] Cchol = diag_pre_multiply(sv, L); // create covariance cholesky``;
"Exception: ... Cchol[2] is 0, but must be positive!"; "These warnings disappear if I change the
`cholesky_factor_cov` declaration to `matrix[K,K] Cchol`").  Adapted: torch in place of Stan, the
factor an unconstrained ``matrix`` (diagonal 3, strictly lower 3 parameters), 200 points from a
correlated 3-D Gaussian, Adam at 0.05.  ``validate_args=True`` is written out: it is torch's
default (``__debug__``), but a ``torch.compile``'d step run earlier in the same process switches
the default off, and the step would then go on to a NaN log-determinant instead of raising.
"""

import torch
from scenario_kit import FALSE_OK, Run
from torch import nn
from torch.distributions import MultivariateNormal

SOURCE = "https://discourse.mc-stan.org/t/matrix-k-k-vs-cholesky-factor-cov-k/22695"
DESCRIPTION = "Cholesky factor with a raw (negative) diagonal: MultivariateNormal raises ValueError"
ASK = []
MUST = [
    [r"\braised\b", r"ValueError", r"exception", r"\berror\b"],
    [r"diagonal", r"LowerCholesky", r"positiv\w*", r"scale_tril", r"cholesky"],
]
MUST_NOT = [FALSE_OK]
ROWS, COLS = torch.tril_indices(3, 3, offset=-1)


class GaussianFit(nn.Module):
    def __init__(self):
        super().__init__()
        self.mean = nn.Parameter(torch.zeros(3))
        self.diag = nn.Parameter(torch.randn(3))  # unconstrained, like the off-diagonal entries
        self.off = nn.Parameter(torch.randn(3))

    def scale_tril(self):
        lower = torch.zeros(3, 3).index_put((ROWS, COLS), self.off)
        return lower + torch.diag_embed(self.diag)

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
    error = None
    try:
        with watch(model) as w:
            optimizer.zero_grad()
            loss = model(x)
            loss.backward()
            optimizer.step()
    except ValueError as e:
        error = e
    return Run(w=w, model=model, before=before, error=error)


def truth(run):
    assert bool((run.model.diag.detach() <= 0).any())  # not a Cholesky factor
    assert run.error is not None
    assert "scale_tril" in str(run.error) and "LowerCholesky" in str(run.error)
    for p, b in zip(run.model.parameters(), run.before, strict=True):
        assert p.grad is None and torch.equal(p.detach(), b)
