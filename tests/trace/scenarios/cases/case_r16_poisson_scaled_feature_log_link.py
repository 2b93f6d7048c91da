"""Control: the same count data (a feature from 0 to 500, Poisson counts with mean 10 + 2x) and the
same log-link model ``rate = exp(w * x + b)``, with the feature rescaled to [0, 1] before the linear
layer and the negative log-likelihood taken from ``nn.PoissonNLLLoss(log_input=True)`` (the mean of
``exp(eta) - y * eta``).  The linear predictor stays in a few units, every rate, loss and gradient
is finite, and the loss falls over the two Adam steps.

Source: https://oduerr.github.io/stat_demos/poisson_nb_regression.html ("Count Regression —
Maximum Likelihood. Model counts with a log link: μ̂ = exp(w·x + b). Fit by minimizing negative
log-likelihood"; its "x guide" over a small range).  Adapted: the stats.stackexchange question's
data, the feature divided by 500, Adam.
"""

import torch
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK, Run
from torch import nn

SOURCE = "https://oduerr.github.io/stat_demos/poisson_nb_regression.html"
DESCRIPTION = "control: Poisson log link on the feature scaled to [0, 1], PoissonNLLLoss(log_input)"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [CLAIMS_NONFINITE, CLAIMS_ERROR, r"overflow", r"no gradient", r"all-zero"]


def data():
    g = torch.Generator().manual_seed(1)
    x = 500.0 * torch.rand(100, 1, generator=g)
    y = torch.poisson(10.0 + 2.0 * x, generator=g)
    return x, y


def step(watch):
    torch.manual_seed(1)
    model = nn.Linear(1, 1)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.05)
    criterion = nn.PoissonNLLLoss(log_input=True)
    x, y = data()
    xs = x / 500.0
    losses, grads, etas = [], [], []
    with watch(model) as w:
        for _ in range(2):
            optimizer.zero_grad()
            eta = model(xs)
            loss = criterion(eta, y)
            loss.backward()
            grads.append([p.grad.detach().clone() for p in model.parameters()])
            etas.append(eta.detach())
            losses.append(loss.item())
            optimizer.step()
    return Run(w=w, y=y, losses=losses, grads=grads, etas=etas)


def truth(run):
    for eta, loss in zip(run.etas, run.losses, strict=True):
        assert float(eta.abs().max()) < 5
        manual = float((torch.exp(eta) - run.y * eta).mean())
        assert abs(manual - loss) < 1e-3 * (1 + abs(loss))
    for gs in run.grads:
        for g in gs:
            assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0)
    assert run.losses[1] < run.losses[0]
