"""Logistic regression fitted with the squared loss on its probabilities, ``sum((y -
sigmoid(x @ w))^2)``, on raw car features (miles per gallon 10 to 34, weight 1.5 to 5.5) from a
start like R's ``runif(3)``: every logit is above 7, every predicted probability near 1.  The 18
cars with ``am = 0`` are all misclassified, yet their squared-loss gradient carries the factor
``p (1 - p)`` of the saturated sigmoid (below 1e-3 for each): the whole gradient is some 2e-5 of
what the logistic loss would give at the same weights, and the step barely moves ``w``.  Every
gradient is finite and nonzero; nothing raises.

Source: https://stats.stackexchange.com/revisions/2ccb4950-e7a4-49dc-b7d8-e637df50f277/view-source
("I am trying to use squared loss to do binary classification"; ``lossSqOnBinary``: ``p =
plogis(x %*% w)``, ``sum((y-p)^2)``; ``x0=runif(3)``; "But in somethings (if we do
`set.seed(1)`), squared loss seems not working well. What is happening here?").  Adapted: the
question's R code in torch, 32 made-up cars in place of ``mtcars`` (``am`` from a noisy rule on
the two features), ``w`` a ``Linear(2, 1)`` started at ``(0.63, 0.52, 0.87)`` (bias, mpg, wt),
SGD at 0.01 in place of BFGS.
"""

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn

SOURCE = (
    "https://stats.stackexchange.com/revisions/2ccb4950-e7a4-49dc-b7d8-e637df50f277/view-source"
)
DESCRIPTION = "squared loss on sigmoid probabilities, saturated start: gradient ~2e-5 of BCE's"
ASK = ["weight"]
MUST = [
    [
        r"saturat\w*",
        r"vanish\w*",
        r"p\s*\*?\s*\(1\s*-\s*p\)",
        r"(tiny|small|near[- ]zero|negligible|vanishing) gradients?",
        r"sigmoid'?s? (derivative|slope|gradient)",
        r"flat",
    ],
    [
        r"squared",
        r"\bmse\b",
        r"brier",
        r"unscaled|unstandardi[sz]ed|not (standardi[sz]ed|scaled|normali[sz]ed)",
        r"logistic loss|cross[- ]entropy|\bbce\b|log[- ]loss",
    ],
]
MUST_NOT = [
    FALSE_OK,
    CLAIMS_NONFINITE,
    r"all[- ]zero",
    r"requires_grad\s*(=|is|was)?\s*False",
    r"not in (the |any )?optimi[sz]er",
]
START = (0.63, 0.52, 0.87)  # bias, mpg, wt: a draw like runif(3)


def cars():
    g = torch.Generator().manual_seed(1)
    mpg = 10 + 24 * torch.rand(32, generator=g)
    wt = 1.5 + 4 * torch.rand(32, generator=g)
    score = (mpg - 20) / 6 - (wt - 3.5) + 0.5 * torch.randn(32, generator=g)
    am = (score > 0.6).float()
    return torch.stack([mpg, wt], 1), am


def features(x):
    return x


def step(watch):
    x, y = cars()
    x = features(x)
    model = nn.Linear(2, 1)
    with torch.no_grad():
        model.bias.fill_(START[0])
        model.weight.copy_(torch.tensor([START[1:]]))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    before = model.weight.detach().clone()
    with watch(model) as w:
        optimizer.zero_grad()
        p = torch.sigmoid(model(x).squeeze(1))
        loss = ((y - p) ** 2).sum()
        loss.backward()
        grad = model.weight.grad.detach().clone()
        optimizer.step()
    return Run(w=w, model=model, x=x, y=y, before=before, grad=grad, loss=loss.item())


def logistic_grad(run):
    """The logistic loss's gradient at the same weights, for comparison."""
    w = run.before.clone().requires_grad_(True)
    b = torch.tensor(START[0])
    logits = run.x @ w[0] + b
    loss = nn.functional.binary_cross_entropy_with_logits(logits, run.y, reduction="sum")
    return torch.autograd.grad(loss, [w])[0]


def truth(run):
    assert 10 <= int((run.y == 0).sum()) <= 24
    p = torch.sigmoid(run.x @ run.before[0] + START[0])
    assert float(p.min()) > 0.999  # every car predicted am = 1
    assert float((p * (1 - p))[run.y == 0].max()) < 1e-3  # the saturated sigmoid's slope
    assert run.loss > 0.9 * float((run.y == 0).sum())  # the misclassified cars' loss stays
    assert bool(torch.isfinite(run.grad).all()) and bool(run.grad.abs().sum() > 0)
    assert float(run.grad.norm()) < 1e-4 * float(logistic_grad(run).norm())
