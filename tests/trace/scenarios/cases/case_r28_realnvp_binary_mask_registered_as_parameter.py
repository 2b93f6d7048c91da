"""A RealNVP flow whose coupling layers hold their binary mask as ``nn.Parameter(mask)`` (without
``requires_grad=False``): the mask is among ``model.parameters()``, gets a gradient like any weight
(the loss reads it through ``x * mask`` and ``1 - mask``) and the Adam step moves the masks off 0
and 1 by about the learning rate.  The layer is no longer a coupling: the "unchanged" half is
scaled, the Jacobian is no longer triangular and ``sum(s)`` is no longer its log-determinant.  Every
gradient is finite; nothing raises.

Source: https://apxml.com/courses/intro-normalizing-flows/chapter-4-coupling-architectures/realnvp-architecture
("RealNVP simplifies this by applying a binary mask. A binary mask is a tensor of the exact same
shape as the input, filled entirely with zeros and ones"; "the elements where b = 1 remain exactly
as they were in the input"; "Because s and t only receive the unmodified parts of the input, the
Jacobian matrix remains triangular").  Adapted: 4 affine couplings on 4-dimensional data with
alternating masks ``[1, 0, 1, 0]`` and ``[0, 1, 0, 1]``, each ``s, t`` from ``Linear(4, 32), Tanh,
Linear(32, 8)`` with the scale bounded by ``tanh``, a standard normal base, 256 points of a
correlated two-component mixture, Adam at 1e-3.
"""

import math

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn

SOURCE = (
    "https://apxml.com/courses/intro-normalizing-flows/"
    "chapter-4-coupling-architectures/realnvp-architecture"
)
DESCRIPTION = "RealNVP coupling mask held as nn.Parameter: Adam moves it off {0, 1}, not a coupling"
ASK = []
MUST = [
    [r"mask\w*"],
    [
        r"nn\.Parameter|\bparameters?\b",
        r"buffer",
        r"requires_grad",
        r"train(ed|able|s)\b",
        r"optimi[sz]er",
        r"binary|\{\s?0,\s?1\s?\}",
    ],
]
MUST_NOT = [FALSE_OK, CLAIMS_NONFINITE, r"\bdead\b", r"not in (the |any )?optimi[sz]er"]
DIM = 4


class Coupling(nn.Module):
    def __init__(self, mask, as_parameter):
        super().__init__()
        if as_parameter:
            self.mask = nn.Parameter(mask)
        else:
            self.register_buffer("mask", mask)
        self.net = nn.Sequential(nn.Linear(DIM, 32), nn.Tanh(), nn.Linear(32, 2 * DIM))

    def forward(self, x):
        keep = x * self.mask
        s_raw, t = self.net(keep).chunk(2, 1)
        s = torch.tanh(s_raw) * (1 - self.mask)
        y = keep + (1 - self.mask) * (x * torch.exp(s) + t)
        return y, s.sum(1)


class RealNVP(nn.Module):
    def __init__(self, as_parameter):
        super().__init__()
        even = torch.tensor([1.0, 0.0, 1.0, 0.0])
        self.layers = nn.ModuleList(
            Coupling(even if i % 2 == 0 else 1 - even, as_parameter) for i in range(4)
        )

    def forward(self, x):
        logdet = torch.zeros(len(x))
        for layer in self.layers:
            x, ld = layer(x)
            logdet = logdet + ld
        return x, logdet


def data():
    g = torch.Generator().manual_seed(1)
    z = torch.randn(256, DIM, generator=g)
    mix = torch.where(torch.rand(256, 1, generator=g) < 0.5, 2.0, -2.0)
    return z @ torch.tensor([[1.0, 0.5, 0, 0], [0, 1, 0.5, 0], [0, 0, 1, 0.5], [0, 0, 0, 1]]) + mix


def step(watch, as_parameter=True):
    torch.manual_seed(0)
    model = RealNVP(as_parameter)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    x = data()
    with watch(model) as w:
        optimizer.zero_grad()
        z, logdet = model(x)
        log_base = -0.5 * (z**2).sum(1) - 0.5 * DIM * math.log(2 * math.pi)
        loss = -(log_base + logdet).mean()
        loss.backward()
        grads = {n: p.grad.detach().clone() for n, p in model.named_parameters()}
        optimizer.step()
    masks = [layer.mask.detach().clone() for layer in model.layers]
    return Run(w=w, model=model, loss=float(loss.detach()), grads=grads, masks=masks)


def truth(run):
    assert math.isfinite(run.loss)
    for i in range(4):
        name = f"layers.{i}.mask"
        assert name in run.grads and bool(run.grads[name].abs().sum() > 0), name
        # moved off {0, 1}: not in every entry, since layers 0 and 2 hold one tensor (``even``,
        # which ``nn.Parameter`` does not copy) and their two Adam updates of about 1e-3 can
        # cancel to the last bit in an entry whose two gradients differ in sign (seen on an
        # AVX-512 processor, not on another)
        assert not bool(((run.masks[i] == 0) | (run.masks[i] == 1)).all()), name
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()), n
