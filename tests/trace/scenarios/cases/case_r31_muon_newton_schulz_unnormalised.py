"""A hand-written Muon for the hidden weight matrices (AdamW for the first and last layers and the
biases, as Muon is meant to be used) whose Newton-Schulz iteration runs on the momentum buffer as it
is, without first dividing it by its norm.  The quintic iteration ``X <- a X + (b XX^T + c (XX^T)^2)
X`` with ``(a, b, c) = (3.4445, -4.7750, 2.0315)`` converges toward the orthogonal factor only for
singular values below about 1; these gradients (a regression on unscaled targets around 40) have
spectral norms of 26 and 33, the iterates overflow within five iterations and the "orthogonalised"
update is NaN.  The first step's gradients are finite; the update writes NaN into both hidden
matrices, and the second step's forward, loss and every gradient are NaN.  Nothing raises.

Source: https://ayushgarg.ca/notes/Muon-An-optimizer-for-hidden-layers-in-neural-networks ("Muon is
an optimizer for 2D parameters of neural network hidden layers"; "Compute gradient $G_t \\leftarrow
\\nabla_{\\theta}\\mathcal{L}_t(\\theta_{t-1})$"; "$B_t \\leftarrow \\mu B_{t-1} + G_t$"; "$O_t
\\leftarrow \\text{NewtonSchulz5}(B_t)$"; "Update parameters $\\theta_t \\leftarrow \\theta_{t-1} -
\\eta O_t$").  Adapted: NewtonSchulz5 written from the note's pseudocode, its normalisation left
out; a regression MLP ``Linear(8, 32), Tanh, Linear(32, 32), Tanh, Linear(32, 32), Tanh, Linear(32,
1)`` on 128 examples with targets ``40 + 15 * (x1 + x2 + x3)``, Muon at lr 0.02 and momentum 0.95 on
the two 32 x 32 matrices, AdamW at 1e-3 on the rest, two steps.
"""

import math

import torch
from scenario_kit import FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://ayushgarg.ca/notes/Muon-An-optimizer-for-hidden-layers-in-neural-networks"
DESCRIPTION = (
    "hand-written Muon, Newton-Schulz on the unnormalised momentum: NaN update, NaN step 2"
)
ASK = []
MUST = [
    [r"\bnan\b|non-?finite|\binf\b|infinit\w*|overflow\w*"],
    [
        r"newton[- ]schulz|\bns5?\b|orthogonali[sz]\w*",
        r"muon",
        r"normali[sz]\w*",
        r"spectral norm|singular values?",
        (
            r"(optimi[sz]er|update|step)[^\n]{0,60}(wrote|writ\w*|made|produc\w*|put)[^\n]{0,30}"
            r"(nan|non-?finite|inf)"
        ),
        r"(nan|non-?finite)[^\n]{0,60}(after|by|from|in) (the )?(optimi[sz]er|update|step)",
        r"outside (the |any )?(torch\.optim )?optimi[sz]er",
    ],
]
MUST_NOT = [FALSE_OK, r"\bdead\b", r"requires_grad\s*(=|is|was)?\s*False"]
A, B, C = 3.4445, -4.7750, 2.0315


def newton_schulz5(g, normalise):
    x = g / (g.norm() + 1e-7) if normalise else g
    for _ in range(5):
        m = x @ x.T
        x = A * x + (B * m + C * m @ m) @ x
    return x


class HandMuon:
    def __init__(self, params, lr=0.02, momentum=0.95):
        self.params, self.lr, self.momentum = list(params), lr, momentum
        self.buffers = [torch.zeros_like(p) for p in self.params]

    @torch.no_grad()
    def step(self):
        for p, buf in zip(self.params, self.buffers, strict=True):
            buf.mul_(self.momentum).add_(p.grad)
            p.add_(newton_schulz5(buf, normalise=False), alpha=-self.lr)

    def zero_grad(self):
        for p in self.params:
            p.grad = None


def make_model():
    return nn.Sequential(
        nn.Linear(8, 32), nn.Tanh(), nn.Linear(32, 32), nn.Tanh(),
        nn.Linear(32, 32), nn.Tanh(), nn.Linear(32, 1),
    )  # fmt: skip


def data():
    g = torch.Generator().manual_seed(1)
    x = torch.randn(128, 8, generator=g)
    y = 40 + 15 * x[:, :3].sum(1, keepdim=True) + torch.randn(128, 1, generator=g)
    return x, y


def step(watch, library=False):
    torch.manual_seed(0)
    model = make_model()
    hidden = [model[2].weight, model[4].weight]
    rest = [p for p in model.parameters() if all(p is not h for h in hidden)]
    if library:
        muon = torch.optim.Muon(hidden, lr=0.02, momentum=0.95, weight_decay=0.0)
    else:
        muon = HandMuon(hidden, lr=0.02, momentum=0.95)
    adamw = torch.optim.AdamW(rest, lr=1e-3)
    x, y = data()
    grads, losses, weights = [], [], []
    with watch(model) as w:
        for _ in range(2):
            muon.zero_grad()
            adamw.zero_grad()
            loss = F.mse_loss(model(x), y)
            loss.backward()
            losses.append(float(loss.detach()))
            grads.append({n: p.grad.detach().clone() for n, p in model.named_parameters()})
            muon.step()
            adamw.step()
            weights.append([h.detach().clone() for h in hidden])
    return Run(w=w, model=model, grads=grads, losses=losses, weights=weights)


def truth(run):
    first, second = run.grads
    assert math.isfinite(run.losses[0])
    for n, g in first.items():
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
    assert all(bool(torch.isnan(h).all()) for h in run.weights[0])  # written by the first update
    assert math.isnan(run.losses[1])
    for n, g in second.items():
        assert bool(torch.isnan(g).any()), n
