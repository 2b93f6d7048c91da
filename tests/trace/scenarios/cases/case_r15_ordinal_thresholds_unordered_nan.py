"""A neural cumulative-link (proportional odds) model for 5 ordered classes: an MLP scores each
example, ``P(y <= j | x) = sigmoid(theta_j - f(x))`` with 4 thresholds, and the class probability is
the difference of consecutive cumulative ones.  The thresholds are a free ``nn.Parameter`` drawn
with ``torch.randn`` and used as they are: nothing keeps them non-decreasing.  Drawn out of order
(here the first two, 1.02 then 0.63), the second class's probability ``sigmoid(theta_2 - f) -
sigmoid(theta_1 - f)`` is negative for all 40 examples; the log of it is NaN for the examples of
that class and the batch's loss is NaN.  The backward of ``log`` at a
negative number is finite (``1 / p``), so every gradient is finite: the step runs on a NaN loss.

Source: https://fa.bianp.net/blog/2013/logistic-ordinal-regression/ ("we model the cummulative
probability as the logistic function ... P(y <= j|X_i) = phi(theta_j - w^T X_i)"; "theta is a
non-decreasing vector (that is, theta_1 <= theta_2 <= ... <= theta_{K-1})").  Adapted: the post's
linear score as a tanh MLP, the thresholds a parameter trained with it by Adam, with no constraint.
"""

import torch
from scenario_kit import FALSE_OK, Run
from torch import nn

SOURCE = "https://fa.bianp.net/blog/2013/logistic-ordinal-regression/"
DESCRIPTION = "ordinal cumulative-link model, thresholds unconstrained and out of order: NaN loss"
ASK = []
MUST = [
    [r"\bnan\b", r"non-?finite"],
    [
        r"\blog\b",
        r"negative",
        r"threshold\w*",
        r"cut-?points?",
        r"(order|sort)\w*|monoton\w*|non-?decreasing",
        r"cumulative",
    ],
]
MUST_NOT = [FALSE_OK, r"dead (units?|relu|neurons?)"]
K = 5


class Ordinal(nn.Module):
    def __init__(self, ordered):
        super().__init__()
        self.score = nn.Sequential(nn.Linear(6, 16), nn.Tanh(), nn.Linear(16, 1))
        self.ordered = ordered
        if ordered:  # theta_1 and positive gaps: theta = theta_1 + cumsum(softplus(gaps))
            self.first = nn.Parameter(torch.tensor([-1.5]))
            self.gaps = nn.Parameter(torch.zeros(K - 2))
        else:
            self.thresholds = nn.Parameter(torch.randn(K - 1))

    def theta(self):
        if not self.ordered:
            return self.thresholds
        steps = nn.functional.softplus(self.gaps)
        return torch.cat([self.first, self.first + torch.cumsum(steps, 0)])

    def forward(self, x):
        f = self.score(x)  # (N, 1)
        cum = torch.sigmoid(self.theta() - f)  # P(y <= j), j = 0 .. K-2
        ones, zeros = torch.ones_like(f), torch.zeros_like(f)
        return torch.cat([cum, ones], 1) - torch.cat([zeros, cum], 1)  # P(y = j), j = 0 .. K-1


def data():
    g = torch.Generator().manual_seed(1)
    x = torch.randn(40, 6, generator=g)
    latent = x[:, 0] + 0.5 * x[:, 1]
    y = torch.bucketize(latent, torch.tensor([-1.0, -0.3, 0.3, 1.0]))
    return x, y


def step(watch, ordered=False):
    torch.manual_seed(4)
    model = Ordinal(ordered)
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    x, y = data()
    with watch(model) as w:
        opt.zero_grad()
        probs = model(x)
        loss = -torch.log(probs[torch.arange(len(y)), y]).mean()
        loss.backward()
        grads = {n: p.grad.detach().clone() for n, p in model.named_parameters()}
        theta = model.theta().detach().clone()
        opt.step()
    return Run(w=w, probs=probs.detach(), y=y, loss=float(loss.detach()), grads=grads, theta=theta)


def truth(run):
    assert not bool((run.theta[1:] >= run.theta[:-1]).all())  # thresholds out of order
    negative = run.probs < 0
    assert bool(negative.any())
    assert bool(negative[torch.arange(len(run.y)), run.y].any())  # a target's probability < 0
    assert run.loss != run.loss  # NaN
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
