"""Control: a mixture density network, as the notebook builds it: a shared body, then three heads
for the mixture's logits, means and scales (``softplus`` plus a floor), and the negative
log-likelihood written with ``log_softmax`` + ``Normal.log_prob`` + ``logsumexp``, on
multimodal, heteroscedastic data.  A healthy step: every head gets a finite, nonzero gradient.

Source: https://github.com/mhuertascompany/euclid-school-2025 ("Intro: Neural Networks for
Log-Probability (Fully PyTorch)": "Mixture Density Network (MDN) that outputs a Gaussian mixture
to capture multi-modality/heteroscedasticity", trained by "negative log-likelihood (NLL)"; its toy
data: a sine branch and a linear branch mixed with an x-dependent probability; the MDN of
Y2/notebooks/MDN_illustration.ipynb, "We still train by negative log-likelihood (log-sum-exp
under the hood)").
"""

import math

import torch
import torch.distributions as D
from scenario_kit import CLAIMS_NONFINITE, HEALTHY_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://github.com/mhuertascompany/euclid-school-2025"
DESCRIPTION = "control: MDN, log-sum-exp mixture NLL on two-branch data: an ordinary step"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    r"loss (is|was|went|goes|became|turned) negative",
    r"not (a )?log-?probabilit",
    r"no gradient",
]


class MDN(nn.Module):
    def __init__(self, k: int = 3):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(1, 32), nn.Tanh(), nn.Linear(32, 32), nn.Tanh())
        self.logits = nn.Linear(32, k)
        self.mu = nn.Linear(32, k)
        self.sigma = nn.Linear(32, k)

    def forward(self, x):
        h = self.body(x)
        return self.logits(h), self.mu(h), F.softplus(self.sigma(h)) + 1e-4


def mdn_nll(logits, mu, sigma, y):
    log_mix = torch.log_softmax(logits, dim=-1) + D.Normal(mu, sigma).log_prob(y)  # (B, K)
    return -torch.logsumexp(log_mix, dim=-1).mean()


def data(n: int = 256):
    g = torch.Generator().manual_seed(1)
    x = torch.rand(n, 1, generator=g) * 8 - 4
    w = torch.sigmoid(x)
    y1 = torch.sin(1.5 * x) + 0.15 * torch.randn(n, 1, generator=g)
    y2 = 0.5 * x + 1.0 + 0.6 * torch.randn(n, 1, generator=g)
    choose = torch.rand(n, 1, generator=g) < w
    return x, torch.where(choose, y1, y2)  # (n, 1), broadcast against the K components


def step(watch):
    torch.manual_seed(0)
    model = MDN()
    x, y = data()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    with watch(model) as w:
        opt.zero_grad()
        loss = mdn_nll(*model(x), y)
        loss.backward()
        grads = {n: p.grad.clone() for n, p in model.named_parameters()}
        opt.step()
    return Run(w=w, loss=loss.item(), grads=grads)


def truth(run):
    assert math.isfinite(run.loss)
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
