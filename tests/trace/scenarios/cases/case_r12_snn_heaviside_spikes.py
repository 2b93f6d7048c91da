"""A spiking network (leaky integrate-and-fire layer over 8 time steps, a readout on the spike
counts) whose spikes are produced with ``torch.heaviside(mem - threshold, 0)``.  The Heaviside step
has a zero derivative almost everywhere, and autograd has no formula for it at all: the forward
runs, but ``loss.backward()`` raises ``RuntimeError: derivative for aten::heaviside is not
implemented`` when it reaches the spikes.  The readout ``fc2``, after the spikes, has its gradient
by then; ``fc1``, before them, gets none (``.grad`` None), and the optimizer step never runs.  Training a
spiking network needs a surrogate gradient in the backward pass.

Source: https://physagi.github.io/spikeDE/tutorials/basics/surrogate ("The generation of a spike
is typically modeled by the Heaviside step function, which has a zero gradient almost everywhere
and an undefined gradient at the threshold.  This discontinuity prevents the direct application of
standard backpropagation algorithms").
"""

import torch
from scenario_kit import FALSE_OK, Run, expect_raise
from torch import nn
from torch.nn import functional as F

SOURCE = "https://physagi.github.io/spikeDE/tutorials/basics/surrogate"
DESCRIPTION = "spikes by torch.heaviside: backward raises, derivative for heaviside not implemented"
ASK = ["fc1.weight"]
MUST = [
    [r"heaviside"],
    [
        r"not implemented",
        r"no (derivative|gradient formula|backward)",
        r"(is not|isn't|not) differentiable",
        r"raised",
        r"RuntimeError",
    ],
]
MUST_NOT = [FALSE_OK, r"no_grad", r"dead (units?|relu|neurons?)"]
STEPS, THRESHOLD, BETA = 8, 1.0, 0.9


def heaviside_spike(v):
    return torch.heaviside(v, torch.tensor(0.0))


class SNN(nn.Module):
    def __init__(self, spike_fn):
        super().__init__()
        self.spike_fn = spike_fn
        self.fc1 = nn.Linear(10, 32)
        self.fc2 = nn.Linear(32, 2)

    def forward(self, x):  # x: (batch, time, features)
        mem = torch.zeros(x.shape[0], 32)
        count = torch.zeros(x.shape[0], 32)
        for t in range(x.shape[1]):
            mem = BETA * mem + self.fc1(x[:, t])
            spk = self.spike_fn(mem - THRESHOLD)
            mem = mem - spk * THRESHOLD  # reset by subtraction
            count = count + spk
        self.counts = count.detach()
        return self.fc2(count)


def step(watch, spike_fn=heaviside_spike):
    torch.manual_seed(0)
    model = SNN(spike_fn)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    g = torch.Generator().manual_seed(1)
    x = 3.0 * torch.randn(16, STEPS, 10, generator=g)
    y = torch.randint(0, 2, (16,), generator=g)
    before = [p.detach().clone() for p in model.parameters()]

    def train_step():
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()

    with watch(model) as w:
        error = expect_raise(train_step, RuntimeError)
    grads = {n: p.grad for n, p in model.named_parameters()}
    moved = any(
        not torch.equal(p.detach(), b) for p, b in zip(model.parameters(), before, strict=True)
    )
    return Run(w=w, error=error, grads=grads, moved=moved, counts=model.counts)


def truth(run):
    assert run.error is not None and "heaviside" in str(run.error)
    assert run.grads["fc1.weight"] is None and run.grads["fc1.bias"] is None
    assert run.grads["fc2.weight"] is not None  # accumulated before backward reached the spikes
    assert not run.moved
