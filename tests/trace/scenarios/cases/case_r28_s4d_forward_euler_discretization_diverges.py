"""A diagonal state space layer (S4D-style, real ``A_n = -(n + 1)``, a learned step ``dt`` per
channel drawn log-uniformly in [1e-3, 1e-1]) discretized by forward Euler: ``A_bar = 1 + dt A``,
``B_bar = dt B``.  The continuous system is stable (every ``A_n < 0``), but where ``dt |A_n| > 2``
the discrete factor ``|1 + dt A_n|`` exceeds 1 (up to 3.3 here) and its powers in the layer's
convolution kernel ``K_l = sum_n C_n A_bar_n^l B_bar_n``, ``l < 128``, pass float32's range: the
kernel holds ``inf`` of both signs, the layer's output ``inf`` and NaN, the loss is NaN and every
gradient of the model holds NaN.  Nothing raises.

Source: https://ssm-foundations.brandon-behring.dev/chapters/ch04-discretization/ ("Every
discrete recurrence in this book - the S4 layer, the Mamba selective scan, the exp-trapezoidal
scheme of Mamba-3 - picks a specific rule for translating"; "The choice matters: a poor
discretization can take a perfectly stable continuous system and produce a discrete recurrence that
diverges").  Adapted: 8 channels of 64 states, the layer run in S4's convolution mode, an encoder
``Linear(1, 8)``, ``Tanh`` after the layer and a decoder ``Linear(8, 1)``, a moving average of a
random input as the target, Adam at 1e-3.
"""

import math

import torch
from scenario_kit import FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://ssm-foundations.brandon-behring.dev/chapters/ch04-discretization/"
DESCRIPTION = "S4D layer discretized by forward Euler 1 + dt A: |A_bar| > 1, kernel overflows, NaN"
ASK = []
MUST = [
    [r"\bnan\b|\binf\b|non-?finite|infinit\w*|overflow\w*"],
    [
        r"discreti[sz]\w*",
        r"euler",
        r"1 \+ (dt|Δ|delta)",
        r"A_?bar|Ā",
        r"unstable|instabilit\w*|diverg\w*|grow\w*|blow\w* up",
        r"recurren\w*|\bscan\b|\bpow\w*|kernel",
        r"overflow\w*",
    ],
]
MUST_NOT = [FALSE_OK, r"\bdead\b", r"requires_grad\s*(=|is|was)?\s*False"]
H, N, LENGTH = 8, 64, 128


class DiagonalSSM(nn.Module):
    def __init__(self, method):
        super().__init__()
        self.method = method
        self.a_log = nn.Parameter(torch.log(torch.arange(1, N + 1).float()).repeat(H, 1))
        self.log_dt = nn.Parameter(torch.empty(H).uniform_(math.log(1e-3), math.log(1e-1)))
        self.b = nn.Parameter(torch.ones(H, N))
        self.c = nn.Parameter(torch.randn(H, N) / math.sqrt(N))
        self.d = nn.Parameter(torch.ones(H))

    def discretize(self):
        a, dt = -torch.exp(self.a_log), torch.exp(self.log_dt)[:, None]
        if self.method == "euler":
            return 1 + dt * a, dt * self.b
        a_bar = torch.exp(dt * a)  # zero-order hold
        return a_bar, (a_bar - 1) / a * self.b

    def kernel(self, length):
        a_bar, b_bar = self.discretize()
        powers = a_bar[:, :, None] ** torch.arange(length)  # (H, N, length)
        return (self.c[:, :, None] * b_bar[:, :, None] * powers).sum(1)  # (H, length)

    def forward(self, u):  # u: (batch, length, H); a causal convolution by the kernel
        k = self.kernel(u.shape[1])
        x = F.pad(u.transpose(1, 2), (u.shape[1] - 1, 0))
        y = F.conv1d(x, k.flip(-1)[:, None, :], groups=H).transpose(1, 2)
        return y + self.d * u


class SequenceModel(nn.Module):
    def __init__(self, method):
        super().__init__()
        self.encoder = nn.Linear(1, H)
        self.ssm = DiagonalSSM(method)
        self.decoder = nn.Linear(H, 1)

    def forward(self, u):
        return self.decoder(torch.tanh(self.ssm(self.encoder(u))))


def data():
    g = torch.Generator().manual_seed(1)
    u = torch.randn(8, LENGTH, 1, generator=g)
    target = F.avg_pool1d(u.transpose(1, 2), 9, stride=1, padding=4).transpose(1, 2)
    return u, target


def step(watch, method="euler"):
    torch.manual_seed(0)
    model = SequenceModel(method)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    u, target = data()
    with torch.no_grad():
        a_bar, _ = model.ssm.discretize()
    with watch(model) as w:
        optimizer.zero_grad()
        out = model(u)
        loss = F.mse_loss(out, target)
        loss.backward()
        grads = {n: p.grad.detach().clone() for n, p in model.named_parameters()}
        optimizer.step()
    return Run(w=w, a_bar=a_bar, out=out.detach(), loss=float(loss.detach()), grads=grads)


def truth(run):
    assert float(run.a_bar.abs().max()) > 2.0  # unstable factors
    assert not bool(torch.isfinite(run.out).all()) and math.isnan(run.loss)
    for n, g in run.grads.items():
        assert bool(torch.isnan(g).any()), n
