"""A Bayes-by-backprop network whose layers draw their weights with
``torch.distributions.Normal(mu, softplus(rho)).sample()``. ``sample()`` runs under ``no_grad``:
the drawn weights carry no history, so the data term of the ELBO (the mean squared error) sends no
gradient to the variational parameters ``mu`` and ``rho``; their gradient is the KL term's alone,
which pulls every ``mu`` towards 0 and every ``sigma`` towards the prior's 1. Every gradient is
finite and nonzero; the network never learns from the data.

Source: https://apxml.com/courses/bayesian-machine-learning/chapter-6-bayesian-deep-learning/vi-methods-bnns
("Bayes by Backprop (BBB)": "The core idea is to optimize the ELBO with respect to the variational
parameters phi using stochastic gradient ascent, much like standard deep learning models are trained
using backpropagation. The main challenge lies in calculating the gradient of the ELBO, specifically
the expectation term E_q[log p(D|w)]"). Adapted: two Bayesian linear layers (4 -> 16 -> 1, tanh),
a N(0, 1) prior with the closed-form KL weighted by 1 / 640 (the data set's size), a regression
batch of 64, Adam; the weights drawn with ``sample()``.
"""

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn
from torch.distributions import Normal
from torch.nn import functional as F

SOURCE = (
    "https://apxml.com/courses/bayesian-machine-learning/"
    "chapter-6-bayesian-deep-learning/vi-methods-bnns"
)
DESCRIPTION = "Bayesian layer weights drawn with .sample(): the data term never reaches mu, rho"
ASK = ["l1.mu_w"]
MUST = [
    [
        r"\.?sample\(\)",
        r"rsample",
        r"reparameteri[sz]\w*",
        (
            r"sampl\w*[^\n]{0,60}(no gradient|not differentiable"
            r"|without (a )?(gradient|graph|history)|detached|cuts?|no_grad)"
        ),
        r"(mse|data|likelihood|reconstruction)[^\n]{0,80}(no|zero|not)[^\n]{0,30}gradient",
    ],
]
MUST_NOT = [FALSE_OK, CLAIMS_NONFINITE, r"not in (the |any )?optimizer"]
DATA_SIZE = 640


class BayesLinear(nn.Module):
    def __init__(self, n_in, n_out):
        super().__init__()
        self.mu_w = nn.Parameter(0.3 * torch.randn(n_out, n_in))
        self.rho_w = nn.Parameter(torch.full((n_out, n_in), -3.0))
        self.mu_b = nn.Parameter(0.1 * torch.randn(n_out))
        self.rho_b = nn.Parameter(torch.full((n_out,), -3.0))

    def forward(self, x):
        w = Normal(self.mu_w, F.softplus(self.rho_w)).sample()
        b = Normal(self.mu_b, F.softplus(self.rho_b)).sample()
        return F.linear(x, w, b)

    def kl(self):
        total = 0.0
        for mu, rho in ((self.mu_w, self.rho_w), (self.mu_b, self.rho_b)):
            sigma = F.softplus(rho)
            total = total + (-torch.log(sigma) + (sigma**2 + mu**2) / 2 - 0.5).sum()
        return total


class BNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.l1 = BayesLinear(4, 16)
        self.l2 = BayesLinear(16, 1)

    def forward(self, x):
        return self.l2(torch.tanh(self.l1(x)))

    def kl(self):
        return self.l1.kl() + self.l2.kl()


def make_model():
    torch.manual_seed(0)
    return BNN()


def data():
    g = torch.Generator().manual_seed(1)
    x = torch.randn(64, 4, generator=g)
    return x, torch.sin(x[:, :1]) + 0.5 * x[:, 1:2]


def step(watch):
    model = make_model()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    x, y = data()
    with watch(model) as w:
        optimizer.zero_grad()
        torch.manual_seed(2)  # the weight noise
        loss = F.mse_loss(model(x), y) + model.kl() / DATA_SIZE
        loss.backward()
        grads = [p.grad.detach().clone() for p in model.parameters()]
        optimizer.step()
    return Run(w=w, grads=grads)


def truth(run):
    model = make_model()
    kl_only = torch.autograd.grad(model.kl() / DATA_SIZE, list(model.parameters()))
    for g, k in zip(run.grads, kl_only, strict=True):
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0)
        assert torch.allclose(g, k, atol=1e-8)  # the KL term's gradient alone
