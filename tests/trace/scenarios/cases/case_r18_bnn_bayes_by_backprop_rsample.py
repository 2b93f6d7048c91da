"""Control: the same Bayes-by-backprop network with its weights drawn by the reparameterization
trick, ``w = mu + softplus(rho) * eps`` (``Normal(mu, sigma).rsample()``). The drawn weights are
functions of ``mu`` and ``rho``, so the data term of the ELBO sends its gradient to the variational
parameters as well as the KL term: every gradient is finite and nonzero and differs from the KL
term's alone.

Source: https://willjhliang.github.io/notes/Deep-Learning/General-Models/🎲-Bayesian-Neural-Network
("the Evidence Lower Bound framework allows us to parameterize the weight distribution and optimize
the ELBO"; "The gradient can then be found via the Reparameterization Trick"). Adapted: two
Bayesian linear layers (4 -> 16 -> 1, tanh), a N(0, 1) prior with the closed-form KL weighted by
1 / 640 (the data set's size), a regression batch of 64, Adam; the weights drawn with ``rsample()``.
"""

import torch
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK, Run
from torch import nn
from torch.distributions import Normal
from torch.nn import functional as F

SOURCE = (
    "https://willjhliang.github.io/notes/Deep-Learning/General-Models/🎲-Bayesian-Neural-Network"
)
DESCRIPTION = "control: Bayes by backprop with rsample(): the data term reaches mu and rho"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    r"(rsample|reparameteri[sz]\w*)[^\n]{0,30}(missing|not used|absent)",
]
DATA_SIZE = 640


class BayesLinear(nn.Module):
    def __init__(self, n_in, n_out):
        super().__init__()
        self.mu_w = nn.Parameter(0.3 * torch.randn(n_out, n_in))
        self.rho_w = nn.Parameter(torch.full((n_out, n_in), -3.0))
        self.mu_b = nn.Parameter(0.1 * torch.randn(n_out))
        self.rho_b = nn.Parameter(torch.full((n_out,), -3.0))

    def forward(self, x):
        w = Normal(self.mu_w, F.softplus(self.rho_w)).rsample()
        b = Normal(self.mu_b, F.softplus(self.rho_b)).rsample()
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
    for g in run.grads:
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0)
    mu_w1 = run.grads[0]
    assert float((mu_w1 - kl_only[0]).norm()) > 10 * float(kl_only[0].norm())  # the data's part
