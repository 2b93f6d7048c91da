"""A mixture density network whose negative log-likelihood is written as the formula reads, the log
of a sum of weighted Gaussian densities: ``-log(sum_k pi_k * N(y | mu_k, sigma_k))`` with each
density computed as ``exp(-(y - mu)^2 / (2 sigma^2)) / (sqrt(2 pi) sigma)``.  At the initial
weights the means sit near 0 with scales near 1, and the targets run up to 20: for the far ones
every component's density underflows float32 to exactly 0, the sum is 0, its log is ``-inf`` and
the loss ``inf``; backward multiplies ``1 / 0`` by the zero derivative of the underflowed ``exp``
and every parameter's gradient is NaN.  The same likelihood through ``logsumexp`` of the log
densities is finite at the same weights.  The data are finite; nothing raises.

Source: https://theorempath.com/topics/mixture-density-networks ("The loss is the negative
log-likelihood of the training data under the mixture"; "This is a sum inside a log, which requires
the log-sum-exp trick for numerical stability"; "Standard deviations: ... ensures positivity").
Adapted: a tanh MLP with three heads (mixture logits, means, ``exp`` scales), 3 components, on
two-branch data ``y = 4x`` / ``y = 20 - 4x`` for ``x`` in [0, 5]; the same setup done right (the
log-sum-exp likelihood) is round 7's ``r7_mdn_mixture_nll``.
"""

import math

import torch
from scenario_kit import FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://theorempath.com/topics/mixture-density-networks"
DESCRIPTION = (
    "MDN NLL as -log(sum pi * density): densities underflow to 0, log 0, loss inf, NaN grads"
)
ASK = []
MUST = [
    [r"\blog\b|logsumexp|log-sum-exp|underflow"],
    [r"\bnan\b|\binf\b|non-?finite|infinit"],
]
MUST_NOT = [
    FALSE_OK,
    (
        r"(input|data|batch|target|label)s?[^\n]{0,30}(contain|has|have|had|with)[^\n]{0,15}"
        r"(nan|inf\b|non-?finite)"
    ),
]
K = 3


class MDN(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(1, 32), nn.Tanh(), nn.Linear(32, 32), nn.Tanh())
        self.pi = nn.Linear(32, K)
        self.mu = nn.Linear(32, K)
        self.log_sigma = nn.Linear(32, K)

    def forward(self, x):
        h = self.body(x)
        return F.softmax(self.pi(h), dim=1), self.mu(h), torch.exp(self.log_sigma(h))


def data():
    g = torch.Generator().manual_seed(1)
    x = 5.0 * torch.rand(128, 1, generator=g)
    branch = torch.rand(128, 1, generator=g) < 0.5
    y = torch.where(branch, 4.0 * x, 20.0 - 4.0 * x) + 0.3 * torch.randn(128, 1, generator=g)
    return x, y


def naive_nll(pi, mu, sigma, y):
    density = torch.exp(-((y - mu) ** 2) / (2 * sigma**2)) / (math.sqrt(2 * math.pi) * sigma)
    return -torch.log((pi * density).sum(dim=1)).mean()


def stable_nll(pi, mu, sigma, y):
    log_density = -((y - mu) ** 2) / (2 * sigma**2) - torch.log(sigma) - 0.5 * math.log(2 * math.pi)
    return -torch.logsumexp(torch.log(pi) + log_density, dim=1).mean()


def step(watch):
    torch.manual_seed(0)
    model = MDN()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    x, y = data()
    with watch(model) as w:
        optimizer.zero_grad()
        pi, mu, sigma = model(x)
        loss = naive_nll(pi, mu, sigma, y)
        loss.backward()
        grads = {n: p.grad.detach().clone() for n, p in model.named_parameters()}
        optimizer.step()
    torch.manual_seed(0)
    ref = MDN()
    with torch.no_grad():
        pi, mu, sigma = ref(x)
        mixture = (pi * torch.exp(-((y - mu) ** 2) / (2 * sigma**2)) / sigma).sum(1)
        stable = stable_nll(pi, mu, sigma, y).item()
    return Run(w=w, x=x, y=y, loss=loss.item(), grads=grads, mixture=mixture, stable=stable)


def truth(run):
    assert bool(torch.isfinite(run.x).all()) and bool(torch.isfinite(run.y).all())
    assert int((run.mixture == 0).sum()) >= 5  # every component's density underflowed
    assert run.loss == float("inf")
    assert math.isfinite(run.stable)  # the log-sum-exp form is finite at the same weights
    for n, g in run.grads.items():
        assert bool(torch.isnan(g).any()), n
