"""A generator trained to match a target point cloud with an entropy-regularised optimal-transport
loss computed by plain Sinkhorn-Knopp iterations (``K = exp(-C / eps)``, ``v = b / (K^T u)``,
``u = a / (K v)``) at ``epsilon = 0.01``.  The generated points start near the origin and the
targets lie on a ring around (4, 0): every squared distance is above 4, so ``exp(-C / 0.01)``
underflows to exactly 0 in float32 for every pair.  ``K^T u = 0`` gives ``v = b / 0 = inf``, then
``K v = 0 * inf = NaN``: the transport plan, the loss and every gradient are NaN.

Source: https://michaelnowotny.github.io/divergence/api/sinkhorn/ (``sinkhorn_divergence(samples_p,
samples_q, *, epsilon=0.01, p=2, max_iter=100, tol=1e-06)``; "Entropic regularization parameter.
Smaller values approximate the Wasserstein distance more closely but require more iterations.
Default is 0.01").  Adapted: the entropic OT cost (not the debiased divergence) in PyTorch with
the page's defaults (``epsilon = 0.01``, squared Euclidean cost, 100 iterations) written as plain
Sinkhorn-Knopp scaling, uniform weights, a ``Linear(2, 16)``, ``Tanh``, ``Linear(16, 2)``
generator fed 64 Gaussian noise points, 64 targets on a unit ring around (4, 0), Adam at 1e-3.
"""

import math

import torch
from scenario_kit import FALSE_OK, Run
from torch import nn

SOURCE = "https://michaelnowotny.github.io/divergence/api/sinkhorn/"
DESCRIPTION = "plain-domain Sinkhorn at eps=0.01: exp(-C/eps) underflows to 0, then 0*inf = NaN"
ASK = []
MUST = [
    [r"\bnan\b", r"non-?finite", r"\binf\b"],
    [
        r"\bexp\b",
        r"sinkhorn",
        r"underflow\w*",
        r"\bdiv\w*",
        r"0 ?/ ?0",
        r"by zero",
        r"epsilon",
        r"\beps\b",
        r"\bK\b",
    ],
]
MUST_NOT = [FALSE_OK, r"explod", r"learning rate"]
EPS, ITERS = 0.01, 100


def sinkhorn_plain(cost, eps=EPS):
    n, m = cost.shape
    a, b = torch.full((n,), 1.0 / n), torch.full((m,), 1.0 / m)
    kernel = torch.exp(-cost / eps)
    u, v = torch.ones(n) / n, torch.ones(m) / m
    for _ in range(ITERS):
        v = b / (kernel.T @ u)
        u = a / (kernel @ v)
    plan = u[:, None] * kernel * v[None, :]
    return (plan * cost).sum(), kernel


def sinkhorn_log(cost, eps=EPS):
    n, m = cost.shape
    log_a, log_b = torch.full((n,), -math.log(n)), torch.full((m,), -math.log(m))
    f, g = torch.zeros(n), torch.zeros(m)
    for _ in range(ITERS):
        f = -eps * torch.logsumexp((g[None, :] - cost) / eps + log_b[None, :], dim=1)
        g = -eps * torch.logsumexp((f[:, None] - cost) / eps + log_a[:, None], dim=0)
    return (log_a.exp() * f).sum() + (log_b.exp() * g).sum(), torch.exp(-cost / eps)


def data():
    g = torch.Generator().manual_seed(1)
    noise = torch.randn(64, 2, generator=g)
    angle = 2 * torch.pi * torch.rand(64, generator=g)
    target = torch.stack([4.0 + angle.cos(), angle.sin()], 1)
    return noise, target


def step(watch, ot=sinkhorn_plain):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(2, 16), nn.Tanh(), nn.Linear(16, 2))
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    noise, target = data()
    with watch(model) as w:
        optimizer.zero_grad()
        cost = torch.cdist(model(noise), target).pow(2)
        loss, kernel = ot(cost)
        loss.backward()
        grads = {n: p.grad.detach().clone() for n, p in model.named_parameters()}
        optimizer.step()
    return Run(w=w, grads=grads, loss=loss.detach(), cost=cost.detach(), kernel=kernel.detach())


def truth(run):
    assert float(run.cost.min()) > 4.0
    assert bool((run.kernel == 0).all())  # exp(-C / 0.01) underflows everywhere
    assert torch.isnan(run.loss)
    for n, g in run.grads.items():
        assert bool(torch.isnan(g).any()), n
