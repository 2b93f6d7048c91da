"""A Mamba-style selective state space layer whose step size ``dt`` is the output of its projection
plus the bias initialised as in Mamba (the inverse softplus of steps between 1e-3 and 1e-1), used
without the ``softplus`` that makes it positive.  The bias alone is between -6.9 and -2.3, so every
``dt`` is negative (-8.1 to -0.7 here), and the discretised decay ``exp(dt * A)`` with ``A =
-exp(A_log)`` negative is above 1 (up to ``2e28``): the hidden state multiplies by it at every
position of the 64-step scan and overflows float32 within a few positions.  The layer's output is
``inf`` and NaN, the loss NaN and every parameter's gradient NaN. Nothing raises.

Source: https://www.howistudyai.com/concepts/0111af2a-2bca-432d-8608-9ea6dffd7f3c ("A
continuous-time SSM is discretized per step using an input-dependent step size Delta_k to produce
matrices A_bar_k and B_bar_k that update the hidden state"; "Stability matters: A must have negative
real parts (e.g., negative diagonal) and Delta_k should be positive and bounded to avoid exploding
states"; "a diagonal-A SSM with sigmoid/softplus gates for B_k, C_k, Delta_k").  Adapted: the
softplus left out; 8 channels of 8 states, ``A_log = log(1..8)`` (S4D-real), ``B`` and ``C`` from
the input, ``A_bar = exp(dt A)``, ``B_bar = dt B``, a sequential scan over 64 positions, an encoder
``Linear(1, 8)``, ``Tanh`` after the layer, a decoder ``Linear(8, 1)``, the running mean of the last
4 inputs as the target, Adam at 1e-3.
"""

import math

import torch
from scenario_kit import FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://www.howistudyai.com/concepts/0111af2a-2bca-432d-8608-9ea6dffd7f3c"
DESCRIPTION = (
    "Mamba selective scan with dt = proj(x) + bias, no softplus: dt < 0, exp(dt A) > 1, NaN"
)
ASK = []
MUST = [
    [r"\bnan\b|\binf\b|non-?finite|infinit\w*|overflow\w*"],
    [
        r"softplus",
        r"\bdt\b|delta|Δ|step size",
        r"negative",
        r"exp\s?\(?\s?(dt|Δ|delta)|decay|A_?bar|Ā",
        r"unstable|instabilit\w*|diverg\w*|explod\w*|grow\w*|blow\w* up|overflow\w*",
    ],
]
MUST_NOT = [FALSE_OK, r"\bdead\b", r"requires_grad\s*(=|is|was)?\s*False"]
D, N, LENGTH = 8, 8, 64


class SelectiveSSM(nn.Module):
    def __init__(self, positive_dt):
        super().__init__()
        self.positive_dt = positive_dt
        self.a_log = nn.Parameter(torch.log(torch.arange(1, N + 1).float()).repeat(D, 1))
        self.dt_proj = nn.Linear(D, D)
        dt = torch.exp(torch.empty(D).uniform_(math.log(1e-3), math.log(1e-1)))
        with torch.no_grad():
            self.dt_proj.bias.copy_(dt + torch.log(-torch.expm1(-dt)))  # inverse softplus
        self.b_proj = nn.Linear(D, N, bias=False)
        self.c_proj = nn.Linear(D, N, bias=False)
        self.d = nn.Parameter(torch.ones(D))

    def forward(self, x):  # (B, L, D)
        dt = self.dt_proj(x)
        if self.positive_dt:
            dt = F.softplus(dt)
        a = -torch.exp(self.a_log)  # (D, N)
        a_bar = torch.exp(dt[..., None] * a)  # (B, L, D, N)
        b_bar = dt[..., None] * self.b_proj(x)[:, :, None]  # (B, L, D, N)
        c = self.c_proj(x)  # (B, L, N)
        h = torch.zeros(x.shape[0], D, N)
        ys = []
        for t in range(x.shape[1]):
            h = a_bar[:, t] * h + b_bar[:, t] * x[:, t, :, None]
            ys.append((h * c[:, t, None]).sum(-1))
        return torch.stack(ys, 1) + self.d * x, dt, a_bar


class Model(nn.Module):
    def __init__(self, positive_dt):
        super().__init__()
        self.encoder = nn.Linear(1, D)
        self.ssm = SelectiveSSM(positive_dt)
        self.decoder = nn.Linear(D, 1)

    def forward(self, u):
        y, dt, a_bar = self.ssm(self.encoder(u))
        return self.decoder(torch.tanh(y)), dt, a_bar


def data():
    g = torch.Generator().manual_seed(1)
    u = torch.randn(16, LENGTH, 1, generator=g)
    target = F.avg_pool1d(F.pad(u.transpose(1, 2), (3, 0)), 4, stride=1).transpose(1, 2)
    return u, target


def step(watch, positive_dt=False):
    torch.manual_seed(0)
    model = Model(positive_dt)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    u, target = data()
    with watch(model) as w:
        optimizer.zero_grad()
        out, dt, a_bar = model(u)
        loss = F.mse_loss(out, target)
        loss.backward()
        grads = {n: p.grad.detach().clone() for n, p in model.named_parameters()}
        optimizer.step()
    return Run(
        w=w,
        model=model,
        dt=dt.detach(),
        a_bar=a_bar.detach(),
        out=out.detach(),
        loss=float(loss.detach()),
        grads=grads,
    )


def truth(run):
    assert float((run.dt < 0).float().mean()) > 0.9
    assert float(run.a_bar.max()) > 1e3
    assert not bool(torch.isfinite(run.out).all())
    assert math.isnan(run.loss)
    for n, g in run.grads.items():
        assert bool(torch.isnan(g).any()), n
