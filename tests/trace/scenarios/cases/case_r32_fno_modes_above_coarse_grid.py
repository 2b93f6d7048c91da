"""A 1-D Fourier neural operator trained on functions sampled at two resolutions, 64 points and 16,
whose spectral layers keep ``modes = 12`` frequencies: ``x_ft[:, :, :12]`` of the ``rfft`` times a
weight of 12 complex modes.  At 64 points the ``rfft`` has 33 frequencies and the first step trains;
at 16 points it has 9, the slice silently returns 9, and the ``einsum`` with the weight's 12 modes
raises ``RuntimeError: einsum(): subscript x has size 12 for operand 1 which does not broadcast with
previously seen size 9`` in the second step's forward: that step has no backward and no optimizer
step.  The operator is resolution-invariant only on grids fine enough to hold the modes it keeps.

Source: https://centerconsulting.com/ai-library/papers/fourier-neural-operator ("Each layer
transforms its input into the frequency domain, multiplies by a set of learned weights on the lowest
frequencies, and transforms back. Because this operation is defined on functions and not on a
particular grid, the same trained model can be evaluated at any resolution").  Adapted: a lifting
``Linear(2, 16)`` of the function and the coordinate, two Fourier layers (spectral convolution plus a
pointwise ``Conv1d``, GELU), a projection ``Linear(16, 32), GELU, Linear(32, 1)``; the target the
periodic solution of ``-u'' + u = a`` for random smooth ``a``; MSE, Adam at 1e-3, one batch of 8
functions at each resolution.
"""

import math

import torch
from scenario_kit import FALSE_OK, Run, expect_raise
from torch import nn
from torch.nn import functional as F

SOURCE = "https://centerconsulting.com/ai-library/papers/fourier-neural-operator"
DESCRIPTION = "FNO with 12 modes trained on a 16-point grid (9 rfft frequencies): einsum raises"
ASK = []
MUST = [
    [r"\braised\b", r"RuntimeError", r"exception", r"\berror\b"],
    [
        r"\bmodes?\b",
        r"frequenc\w*",
        r"rfft|fft",
        r"resolution|grid|16[- ]point",
        r"einsum",
        r"\b(9|12)\b",
    ],
]
MUST_NOT = [FALSE_OK, r"\bnan\b", r"\bdead\b", r"all[- ]zero"]
WIDTH, MODES = 16, 12


class SpectralConv1d(nn.Module):
    def __init__(self, clip):
        super().__init__()
        self.clip = clip
        scale = 1 / (WIDTH * WIDTH)
        self.weight = nn.Parameter(scale * torch.rand(WIDTH, WIDTH, MODES, dtype=torch.cfloat))

    def forward(self, x):
        n = x.shape[-1]
        x_ft = torch.fft.rfft(x)
        k = min(MODES, x_ft.shape[-1]) if self.clip else MODES
        out_ft = torch.zeros(x.shape[0], WIDTH, n // 2 + 1, dtype=torch.cfloat)
        out_ft[:, :, :k] = torch.einsum("bix,iox->box", x_ft[:, :, :k], self.weight[..., :k])
        return torch.fft.irfft(out_ft, n=n)


class FNO(nn.Module):
    def __init__(self, clip):
        super().__init__()
        self.lift = nn.Linear(2, WIDTH)
        self.spectral = nn.ModuleList([SpectralConv1d(clip) for _ in range(2)])
        self.pointwise = nn.ModuleList([nn.Conv1d(WIDTH, WIDTH, 1) for _ in range(2)])
        self.project = nn.Sequential(nn.Linear(WIDTH, 32), nn.GELU(), nn.Linear(32, 1))

    def forward(self, a):  # (B, n)
        grid = torch.linspace(0, 1, a.shape[-1])
        h = self.lift(torch.stack([a, grid.expand_as(a)], -1)).transpose(1, 2)
        for spectral, pointwise in zip(self.spectral, self.pointwise, strict=True):
            h = F.gelu(spectral(h) + pointwise(h))
        return self.project(h.transpose(1, 2)).squeeze(-1)


def batch(n, g):
    k = torch.arange(n // 2 + 1).float()
    coeffs = torch.randn(8, n // 2 + 1, dtype=torch.cfloat, generator=g) / (1 + k) ** 2
    a = torch.fft.irfft(coeffs, n=n) * n
    u = torch.fft.irfft(torch.fft.rfft(a) / (1 + (2 * math.pi * k) ** 2), n=n)  # -u'' + u = a
    return a, u


def step(watch, clip=False):
    torch.manual_seed(0)
    model = FNO(clip)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    g = torch.Generator().manual_seed(1)
    batches = [batch(64, g), batch(16, g)]
    losses, grads, errors, params = [], [], [], []
    with watch(model) as w:
        for a, u in batches:

            def train_step(a=a, u=u):
                optimizer.zero_grad()
                loss = F.mse_loss(model(a), u)
                losses.append(float(loss.detach()))
                loss.backward()
                grads.append({n: p.grad.detach().clone() for n, p in model.named_parameters()})
                optimizer.step()

            errors.append(expect_raise(train_step, RuntimeError))
            params.append({n: p.detach().clone() for n, p in model.named_parameters()})
    return Run(w=w, losses=losses, grads=grads, errors=errors, params=params)


def truth(run):
    assert run.errors[0] is None and math.isfinite(run.losses[0])
    for n, g in run.grads[0].items():
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
    error = run.errors[1]
    assert error is not None and "einsum" in str(error) and "size 12" in str(error), error
    assert "size 9" in str(error)
    assert len(run.losses) == 1 and len(run.grads) == 1  # the second step never had a loss
    first, second = run.params
    assert all(torch.equal(first[n], second[n]) for n in first)
