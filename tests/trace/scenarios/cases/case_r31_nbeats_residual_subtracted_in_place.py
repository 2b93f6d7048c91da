"""An N-BEATS forecaster whose doubly residual stacking subtracts each block's backcast from the
running residual in place, ``residual -= backcast``.  Each block's first ``Linear`` saved its input,
the residual, to compute its weight gradient (for the first block that is the caller's own input
window, which the subtraction also overwrites), and the next subtraction bumps that tensor's
version.  The forward and the loss are finite, but ``loss.backward()`` raises ``RuntimeError: one of
the variables needed for gradient computation has been modified by an inplace operation`` when it
reaches the second block's first layer: the last block and most of the second have their gradients
by then, the second block's first layer and the whole first block get none (``.grad`` None), and the
optimizer step never runs.

Source: https://dl.reviews/2020/02/23/n-beats/ ("Each block has one input and two outputs (called
forecast and backcast). The global model output is the sum of forecasts of all blocks in the
network, while the backcasts are subtracted from the previous inputs to create the input for the
following block"; "Each block has four fully connected layers with ReLU activations before splitting
into forecast and backcast branches. Each branch has one more fully connected layer without
activation, and then a linear basis layer").  Adapted: the subtraction written in place; 3 generic
blocks (the last without the backcast branch nothing would read) of four ``Linear`` layers of width
64 with GELU instead of ReLU, a ``Linear(64, 8)`` per branch and a learned linear basis to a
lookback of 24 and a horizon of 8, 32 windows of noisy sines, MSE, Adam at 1e-3.
"""

import math

import torch
from scenario_kit import FALSE_OK, Run, expect_raise
from torch import nn
from torch.nn import functional as F

SOURCE = "https://dl.reviews/2020/02/23/n-beats/"
DESCRIPTION = "N-BEATS residual -= backcast in place: backward raises, first block no grad, no step"
ASK = ["blocks.0.fc.0.weight"]
MUST = [
    [r"in-?place|-=|\bsub_\b"],
    [
        r"modified by an inplace operation",
        r"(needed|saved) for (gradient computation|backward)",
        r"version",
        r"raised",
        r"RuntimeError",
    ],
]
MUST_NOT = [FALSE_OK, r"\bnan\b", r"no_grad", r"dead (units?|relu|neurons?)"]
LOOKBACK, HORIZON, WIDTH, THETA = 24, 8, 64, 8


class Block(nn.Module):
    def __init__(self, last=False):
        super().__init__()
        self.last = last
        self.fc = nn.Sequential(
            nn.Linear(LOOKBACK, WIDTH), nn.GELU(), nn.Linear(WIDTH, WIDTH), nn.GELU(),
            nn.Linear(WIDTH, WIDTH), nn.GELU(), nn.Linear(WIDTH, WIDTH), nn.GELU(),
        )  # fmt: skip
        if not last:  # the last block's backcast would be read by nothing
            self.theta_b = nn.Linear(WIDTH, THETA, bias=False)
            self.basis_b = nn.Linear(THETA, LOOKBACK)
        self.theta_f = nn.Linear(WIDTH, THETA, bias=False)
        self.basis_f = nn.Linear(THETA, HORIZON)

    def forward(self, x):
        h = self.fc(x)
        backcast = None if self.last else self.basis_b(self.theta_b(h))
        return backcast, self.basis_f(self.theta_f(h))


class NBeats(nn.Module):
    def __init__(self, in_place):
        super().__init__()
        self.in_place = in_place
        self.blocks = nn.ModuleList([Block(), Block(), Block(last=True)])

    def forward(self, x):
        residual, forecast = x, 0
        for block in self.blocks:
            backcast, f = block(residual)
            forecast = forecast + f
            if backcast is None:
                break
            if self.in_place:
                residual -= backcast
            else:
                residual = residual - backcast
        return forecast


def data():
    g = torch.Generator().manual_seed(1)
    phase = 2 * math.pi * torch.rand(32, 1, generator=g)
    t = torch.arange(LOOKBACK + HORIZON).float()
    series = torch.sin(2 * math.pi * t / 12 + phase) + 0.1 * torch.randn(
        32, LOOKBACK + HORIZON, generator=g
    )
    return series[:, :LOOKBACK].clone(), series[:, LOOKBACK:].clone()


def step(watch, in_place=True):
    torch.manual_seed(0)
    model = NBeats(in_place)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    window, target = data()
    kept = window.clone()
    before = {n: p.detach().clone() for n, p in model.named_parameters()}
    losses = []

    def train_step():
        optimizer.zero_grad()
        loss = F.mse_loss(model(window), target)
        losses.append(float(loss.detach()))
        loss.backward()
        optimizer.step()

    with watch(model) as w:
        error = expect_raise(train_step, RuntimeError)
    grads = {n: p.grad for n, p in model.named_parameters()}
    moved = any(not torch.equal(p.detach(), before[n]) for n, p in model.named_parameters())
    return Run(
        w=w, error=error, grads=grads, moved=moved, losses=losses,
        window_changed=not torch.equal(window, kept),
    )  # fmt: skip


def truth(run):
    assert run.error is not None and "inplace operation" in str(run.error)
    assert math.isfinite(run.losses[0])
    for n, g in run.grads.items():
        reached = n.startswith("blocks.2.") or (n.startswith("blocks.1.") and ".fc.0." not in n)
        assert (g is not None) == reached, n
    assert not run.moved
    assert run.window_changed  # the caller's input window was overwritten too
