"""A Poisson regression with the canonical log link, ``rate = exp(w * x + b)``, fitted by the
negative log-likelihood ``sum(exp(eta) - y * eta)`` on a raw feature ranging from 0 to 500.  At the
initial weight (0.515) the linear predictor reaches 257 for the largest ``x``; ``exp`` overflows
float32 above about 88.7, so the rate is ``inf`` for most examples, the loss is ``inf`` and the
weight's gradient ``sum((exp(eta) - y) * x)`` is ``inf``: the step sends the weight to ``-inf``.
The data and labels are finite; nothing raises.

Source: https://stats.stackexchange.com/questions/410873/poisson-regression-predictions ("using the
canonical exponential link function"; ``low, high = 0, 500``, ``xs = np.random.uniform(low, high,
size=100)``, ``means = intercept + slope * xs``, ``def neg_log_likelihood(beta, xs, ys): return
-np.sum(ys * (beta @ xs) - np.exp(beta @ xs))``).  Adapted: ``beta @ xs`` as an ``nn.Linear(1, 1)``
(seed 1) and one SGD step in torch.
"""

import torch
from scenario_kit import FALSE_OK, Run
from torch import nn

SOURCE = "https://stats.stackexchange.com/questions/410873/poisson-regression-predictions"
DESCRIPTION = "Poisson NLL with exp link on a raw 0-500 feature: exp overflows, loss and grad inf"
ASK = []
MUST = [
    [r"\bexp\b|exponential|overflow"],
    [r"\binf\b|infinit|non-?finite|overflow"],
]
MUST_NOT = [
    FALSE_OK,
    (
        r"(input|data|batch|target|label)s?[^\n]{0,30}(contain|has|have|had|with)[^\n]{0,15}"
        r"(nan|inf\b|non-?finite)"
    ),
]


def data():
    g = torch.Generator().manual_seed(1)
    x = 500.0 * torch.rand(100, 1, generator=g)
    y = torch.poisson(10.0 + 2.0 * x, generator=g)
    return x, y


def step(watch):
    torch.manual_seed(1)
    model = nn.Linear(1, 1)  # eta = beta @ xs, intercept included
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-6)
    x, y = data()
    w0 = model.weight.item()
    with watch(model) as w:
        optimizer.zero_grad()
        eta = model(x)
        loss = (torch.exp(eta) - y * eta).sum()  # -sum(ys * eta - exp(eta))
        loss.backward()
        grad = model.weight.grad.detach().clone()
        optimizer.step()
    return Run(
        w=w,
        w0=w0,
        x=x,
        y=y,
        eta=eta.detach(),
        loss=loss.item(),
        grad=grad,
        after=model.weight.item(),
    )


def truth(run):
    assert bool(torch.isfinite(run.x).all()) and bool(torch.isfinite(run.y).all())
    assert bool(torch.isfinite(run.eta).all())  # the linear predictor itself is finite
    assert run.w0 * 500 > 89
    overflow = torch.isinf(torch.exp(run.eta))
    assert int(overflow.sum()) > 50  # exp of more than half the predictors is inf
    assert run.loss == float("inf")
    assert not bool(torch.isfinite(run.grad).all())
    assert run.after == float("-inf")
