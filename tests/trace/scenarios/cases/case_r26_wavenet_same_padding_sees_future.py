"""A WaveNet-style next-sample predictor whose dilated convolutions keep the sequence length with
``nn.Conv1d(..., dilation=d, padding=d)`` (kernel 3): the padding is added on both sides, so
output ``t`` of each layer reads inputs ``t - d``, ``t`` and ``t + d``.  The stack is not causal:
the prediction made at position ``t`` for sample ``t + 1`` reads samples ``t + 1`` to ``t + 7``,
the target among them (asserted from the gradient of one output with respect to the input), and
the model can learn to copy it.  Every gradient is finite and nonzero; nothing raises.

Source: https://theblog.github.io/post/convolution-in-autoregressive-neural-networks/ ("This post
explains how to use one-dimensional causal and dilated convolutions in autoregressive neural
networks such as WaveNet"; "It would speed up training if we could predict the next time steps for
a whole training example in a single feed-forward pass. To do this, we need to apply the same four
weights to each chunk of time steps in the input frame. This is exactly what a Conv1D layer with
kernel_size=4 does").  Adapted: a 1 x 1 input convolution to 16 channels, three gated residual
blocks (``tanh(filter) * sigmoid(gate)``, dilations 1, 2 and 4, kernel 3), summed skip
connections added to the last residual output, a 1 x 1 output convolution; 8 noisy sums of sinusoids of 64 samples, MSE against the
next sample, Adam at 1e-3.
"""

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://theblog.github.io/post/convolution-in-autoregressive-neural-networks/"
DESCRIPTION = "WaveNet convs padded on both sides (padding=d): output t reads t+1..t+7, not causal"
ASK = []
MUST = [
    [
        r"causal\w*",
        r"future",
        r"leak\w*",
        r"look[- ]?ahead",
        r"padd\w*[^\n]{0,80}(both|symmetric|same|cent(er|re)d|left)",
        r"t ?\+ ?1\b",
    ]
]
MUST_NOT = [
    FALSE_OK,
    CLAIMS_NONFINITE,
    r"\bdead\b",
    r"requires_grad\s*(=|is|was)?\s*False",
    r"not in (the |any )?optimi[sz]er",
]
DILATIONS = (1, 2, 4)


class Block(nn.Module):
    def __init__(self, d, causal):
        super().__init__()
        self.d, self.causal = d, causal
        pad = 0 if causal else d
        self.filter = nn.Conv1d(16, 16, 3, dilation=d, padding=pad)
        self.gate = nn.Conv1d(16, 16, 3, dilation=d, padding=pad)
        self.res = nn.Conv1d(16, 16, 1)

    def forward(self, h):
        x = F.pad(h, (2 * self.d, 0)) if self.causal else h  # left padding only
        z = torch.tanh(self.filter(x)) * torch.sigmoid(self.gate(x))
        return h + self.res(z), z


class WaveNet(nn.Module):
    def __init__(self, causal):
        super().__init__()
        self.inp = nn.Conv1d(1, 16, 1)
        self.blocks = nn.ModuleList(Block(d, causal) for d in DILATIONS)
        self.out = nn.Conv1d(16, 1, 1)

    def forward(self, x):
        h, skip = self.inp(x), 0
        for block in self.blocks:
            h, z = block(h)
            skip = skip + z
        return self.out(torch.tanh(h + skip))  # the last residual output is read too


def data():
    g = torch.Generator().manual_seed(1)
    t = torch.arange(64, dtype=torch.float32)
    freq = torch.rand(8, 2, 1, generator=g) * 0.4 + 0.05
    x = torch.sin(freq * t).sum(1, keepdim=True) + 0.05 * torch.randn(8, 1, 64, generator=g)
    return x


def reach(model, t0=20):
    """Which input samples the prediction made at position ``t0`` depends on."""
    x = data().requires_grad_(True)
    model(x)[0, 0, t0].backward()
    return (x.grad[0, 0].abs() > 0).nonzero().flatten().tolist()


def step(watch, causal=False):
    torch.manual_seed(0)
    model = WaveNet(causal)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    x = data()
    with watch(model) as w:
        optimizer.zero_grad()
        pred = model(x)
        F.mse_loss(pred[:, :, :-1], x[:, :, 1:]).backward()  # predict sample t + 1 at t
        grads = {n: p.grad.detach().clone() for n, p in model.named_parameters()}
        optimizer.step()
    return Run(w=w, grads=grads, reach=reach(model))


def truth(run):
    assert max(run.reach) == 27  # t0 = 20 reads up to t0 + 1 + 2 + 4
    assert 21 in run.reach  # the target of position 20
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
