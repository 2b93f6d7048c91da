"""Deep kernel learning, a neural feature map under an RBF kernel, trained by the Gaussian process's
negative log marginal likelihood ``0.5 y^T K^-1 y + 0.5 log|K| + (n/2) log(2 pi)``, with the
log-determinant written ``torch.log(torch.det(K))``.  With 64 training points on a smooth kernel
most eigenvalues of ``K`` sit near the noise variance 0.1: their product underflows float32 and
``det(K)`` is exactly 0.  ``log 0 = -inf``, the loss is ``-inf``; the backward of the log sends
``1 / 0 = inf`` into the determinant's backward, which multiplies it by ``det(K) = 0``: every
gradient (the feature network's and the kernel's hyperparameters') is NaN, and Adam writes NaN into
every parameter.  Nothing raises.

Source: https://www.emergentmind.com/topics/deep-kernel-learning-dkl ("DKL architectures replace
the standard GP covariance function with a 'deep kernel': input data are transformed via a neural
network to learned feature embeddings, and these embeddings serve as the arguments for a base GP
kernel"; "For observations, the joint marginal likelihood is"; "retaining automatic complexity
control").  Adapted: the determinant taken directly (the page gives the likelihood, not how its
log-determinant is computed); 64 points of ``sin(2x)`` plus noise on [-3, 3], feature network
``Linear(1, 32), Tanh, Linear(32, 2, bias=False)`` (an RBF kernel reads differences of
features: a last bias would cancel), learned log lengthscale, log output scale and log noise
(starting at 0, 0 and log 0.1), Adam at 1e-2.
"""

import math

import torch
from scenario_kit import FALSE_OK, Run
from torch import nn

SOURCE = "https://www.emergentmind.com/topics/deep-kernel-learning-dkl"
DESCRIPTION = "DKL marginal likelihood with log(det(K)): det underflows to 0, -inf loss, NaN grads"
ASK = []
MUST = [
    [r"\bnan\b|\binf\b|non-?finite|infinit\w*"],
    [
        r"\bdet\b|det\(|determinant|logdet|slogdet",
        r"underflow\w*",
        r"log\s?\(?0\)?|log of (zero|0)",
        r"cholesky",
    ],
]
MUST_NOT = [FALSE_OK, r"\bdead\b", r"requires_grad\s*(=|is|was)?\s*False"]


class DeepKernelGP(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(nn.Linear(1, 32), nn.Tanh(), nn.Linear(32, 2, bias=False))
        self.log_lengthscale = nn.Parameter(torch.zeros(()))
        self.log_outputscale = nn.Parameter(torch.zeros(()))
        self.log_noise = nn.Parameter(torch.tensor(math.log(0.1)))

    def forward(self, x):
        f = self.features(x) / self.log_lengthscale.exp()
        k = self.log_outputscale.exp() * torch.exp(-0.5 * torch.cdist(f, f).pow(2))
        return k + self.log_noise.exp() * torch.eye(len(x))


def nll_det(k, y):
    return 0.5 * (
        y @ torch.linalg.solve(k, y) + torch.log(torch.det(k)) + len(y) * math.log(2 * math.pi)
    )


def nll_cholesky(k, y):
    chol = torch.linalg.cholesky(k)
    alpha = torch.cholesky_solve(y[:, None], chol)[:, 0]
    logdet = 2 * chol.diagonal().log().sum()
    return 0.5 * (y @ alpha + logdet + len(y) * math.log(2 * math.pi))


def data():
    g = torch.Generator().manual_seed(1)
    x = torch.linspace(-3, 3, 64)[:, None]
    return x, torch.sin(2 * x[:, 0]) + 0.1 * torch.randn(64, generator=g)


def step(watch, cholesky=False):
    torch.manual_seed(0)
    model = DeepKernelGP()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    x, y = data()
    with watch(model) as w:
        optimizer.zero_grad()
        k = model(x)
        loss = nll_cholesky(k, y) if cholesky else nll_det(k, y)
        loss.backward()
        grads = {n: p.grad.detach().clone() for n, p in model.named_parameters()}
        optimizer.step()
    k = k.detach()
    return Run(
        w=w,
        model=model,
        det=float(torch.det(k)),
        slogdet=float(torch.linalg.slogdet(k).logabsdet),
        loss=float(loss.detach()),
        grads=grads,
    )


def truth(run):
    assert run.det == 0.0 and math.isfinite(run.slogdet)  # the true log|K| is finite
    assert run.loss == -math.inf
    for n, g in run.grads.items():
        assert bool(torch.isnan(g).all()), n
    for n, p in run.model.named_parameters():
        assert bool(torch.isnan(p).all()), n
