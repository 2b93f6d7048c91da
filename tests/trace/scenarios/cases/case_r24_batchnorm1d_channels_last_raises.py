"""A sequence classifier that applies ``nn.BatchNorm1d(16)`` to per-step features laid out
``(N, L, C)`` = (32, 12, 16), the layout its linear projection produces.  ``BatchNorm1d`` reads a
3-D input as ``(N, C, L)``: it takes the 12 time steps for channels, and the forward raises
``RuntimeError: running_mean should contain 12 elements not 16``.  No backward runs: every
``.grad`` stays ``None`` and nothing moves.

Source: https://pytorch.org/docs/1.10.0/generated/torch.nn.BatchNorm1d.html ("Applies Batch
Normalization over a 2D or 3D input (a mini-batch of 1D inputs with optional additional channel
dimension)"; "num_features - C from an expected input of size (N, C, L) or L from input of size
(N, L)").  Adapted: a ``Linear(8, 16)`` projection per step, ``BatchNorm1d(16)``, ``Tanh``, a mean
over the 12 steps and a ``Linear(16, 3)`` head, 32 sequences, Adam at 1e-3.
"""

import torch
from scenario_kit import FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://pytorch.org/docs/1.10.0/generated/torch.nn.BatchNorm1d.html"
DESCRIPTION = "BatchNorm1d(16) on (N, L, C) features: raises 'running_mean should contain 12'"
ASK = []
MUST = [
    [r"\braised\b", r"RuntimeError", r"exception", r"\berror\b"],
    [
        r"BatchNorm1d",
        r"running_mean",
        r"\(N, ?C, ?L\)",
        r"channels?",
        r"num_features",
        r"transpose",
        r"permute",
    ],
]
MUST_NOT = [FALSE_OK]


class SequenceNet(nn.Module):
    def __init__(self, channels_first=False):
        super().__init__()
        self.channels_first = channels_first
        self.proj = nn.Linear(8, 16)
        self.bn = nn.BatchNorm1d(16)
        self.head = nn.Linear(16, 3)

    def forward(self, x):
        h = self.proj(x)  # (N, L, 16)
        h = self.bn(h.transpose(1, 2)).transpose(1, 2) if self.channels_first else self.bn(h)
        return self.head(torch.tanh(h).mean(1))


def data():
    g = torch.Generator().manual_seed(1)
    x = torch.randn(32, 12, 8, generator=g)
    return x, x.mean(1)[:, :3].argmax(1)


def step(watch, channels_first=False):
    torch.manual_seed(0)
    model = SequenceNet(channels_first)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    x, y = data()
    before = {n: p.detach().clone() for n, p in model.named_parameters()}
    error = None
    try:
        with watch(model) as w:
            optimizer.zero_grad()
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            optimizer.step()
    except RuntimeError as e:
        error = e
    return Run(w=w, model=model, before=before, error=error)


def truth(run):
    assert run.error is not None and "running_mean should contain 12 elements not 16" in str(
        run.error
    )
    for n, p in run.model.named_parameters():
        assert p.grad is None and torch.equal(p.detach(), run.before[n]), n
