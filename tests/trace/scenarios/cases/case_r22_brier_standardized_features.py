"""The control of ``mse_on_sigmoid_saturated_start``: the same squared loss on sigmoid
probabilities (the Brier score) and the same start, on the two car features standardised (mean 0,
standard deviation 1).  The logits start between about -1.5 and 2.7, no probability is saturated
(``p (1 - p)`` above 0.02 for every car), and the squared loss's gradient is of the same order as
the logistic loss's.  The squared loss on probabilities is a proper scoring rule: nothing is wrong
with the step.  Every gradient is finite and nonzero.

Source: https://stats.stackexchange.com/questions/264625/why-use-squared-loss-on-probabilities-instead-of-logistic-loss
("Why do you think squared loss is wrong? If the goal is to predict a binary value and you are
outputting a probability, squared loss seems reasonable to me"; "Should we use logistic loss
instead?").  Adapted: the bug's 32 made-up cars, standardised, ``Linear(2, 1)`` started at
``(0.63, 0.52, 0.87)``, SGD at 0.01.
"""

import torch
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK, Run
from torch import nn

SOURCE = (
    "https://stats.stackexchange.com/questions/264625/"
    "why-use-squared-loss-on-probabilities-instead-of-logistic-loss"
)
DESCRIPTION = "control: Brier score (squared loss on sigmoid), standardised features: no saturation"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    r"all[- ]zero",
    r"\bzero grad\w*",
    r"\bdead\b",
    r"saturat\w*",
    r"vanish\w*",
]
START = (0.63, 0.52, 0.87)


def cars():
    g = torch.Generator().manual_seed(1)
    mpg = 10 + 24 * torch.rand(32, generator=g)
    wt = 1.5 + 4 * torch.rand(32, generator=g)
    score = (mpg - 20) / 6 - (wt - 3.5) + 0.5 * torch.randn(32, generator=g)
    am = (score > 0.6).float()
    return torch.stack([mpg, wt], 1), am


def features(x):
    return (x - x.mean(0)) / x.std(0)


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
        grads = [q.grad.detach().clone() for q in model.parameters()]
        optimizer.step()
    return Run(w=w, model=model, x=x, y=y, before=before, grads=grads, grad=grads[0],
               loss=loss.item())  # fmt: skip


def logistic_grad(run):
    w = run.before.clone().requires_grad_(True)
    b = torch.tensor(START[0])
    logits = run.x @ w[0] + b
    loss = nn.functional.binary_cross_entropy_with_logits(logits, run.y, reduction="sum")
    return torch.autograd.grad(loss, [w])[0]


def truth(run):
    p = torch.sigmoid(run.x @ run.before[0] + START[0])
    assert float((p * (1 - p)).min()) > 0.02  # nowhere saturated
    assert float(run.grad.norm()) > 0.05 * float(logistic_grad(run).norm())
    for g in run.grads:
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0)
    assert not torch.equal(run.model.weight.detach(), run.before)
