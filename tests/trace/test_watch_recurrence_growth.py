"""Class: a NaN made in the forward by a state that a loop multiplies, step after step, by
factors above 1 (a state-space scan ``h = exp(Δ·A) * h + Δ·B x`` with ``Δ·A > 0``: a step size
without its ``softplus``) is placed at the operation and said to be a recurrence whose state
grew until it overflowed, with its factors' size and, when they come from ``exp``, how many
of them have a positive exponent.  A Mamba-style scan was placed at "add" with nothing more,
and the text blamed the layer's weights, which were NaN only because the optimizer stepped
with the NaN gradient.

Invariant: the steps, the largest factor, the state's size before the overflow and the count
of ``exp`` factors above 1 are torch's own values (the scan run again by hand); a scan whose
factors stay below 1 makes no NaN and no claim; weights are blamed only when they were NaN
before the step.  Generated: the step size's sign and size, the length, the width, the seed.
Not placed (the module alone is named, no recurrence claimed): an overflow at the loop's last
step, whose state no node keeps.
"""

from __future__ import annotations

import re

import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn

import gradarg


class Scan(nn.Module):
    def __init__(self, n, dt):
        super().__init__()
        self.dt = nn.Parameter(torch.full((n,), dt))
        if n > 1:  # one decaying channel beside the others: its factors are below 1
            self.dt.data[0] = 0.5
        self.a_log = nn.Parameter(torch.zeros(n))  # A = -1

    def forward(self, x):  # (B, L, n)
        a_bar = torch.exp(self.dt * -torch.exp(self.a_log) * torch.ones_like(x))
        h = torch.zeros(x.shape[0], x.shape[2])
        ys = []
        for t in range(x.shape[1]):
            h = a_bar[:, t] * h + self.dt * x[:, t]
            ys.append(h)
        return torch.stack(ys, 1)


class Model(nn.Module):
    def __init__(self, n, dt):
        super().__init__()
        self.scan = Scan(n, dt)
        self.head = nn.Linear(n, 1)

    def forward(self, x):
        return self.head(self.scan(x))


@settings(max_examples=25, deadline=None)
@given(dt=st.floats(0.5, 30) | st.floats(-30, -0.5), length=st.integers(2, 40),
       n=st.integers(1, 4), seed=st.integers(0, 2**16))
def test_a_growing_recurrence_is_named_with_torchs_figures(dt, length, n, seed):
    g = torch.Generator().manual_seed(seed)
    x = 0.5 + torch.rand(3, length, n, generator=g)  # positive: the state cannot cancel
    torch.manual_seed(seed)
    model = Model(n, dt)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    with gradarg.watch(model) as w:
        model(x).pow(2).mean().backward()
        optimizer.step()
    # the truth: the scan again, by hand, in float32
    with torch.no_grad():
        step = torch.full((n,), dt)
        step[0] = 0.5 if n > 1 else dt
        a_bar = torch.exp(-step) * torch.ones_like(x)
        h, states = torch.zeros(3, n), []
        for t in range(length):
            h = a_bar[:, t] * h + step * x[:, t]
            states.append(h)
    bad = [t for t, s in enumerate(states) if not bool(torch.isfinite(s).all())]
    text = w.summary(checks=False)
    assert "its weights" not in text, text  # the weights were finite at the forward
    if not bad:
        assert "recurrence" not in text and "forward pass" not in text, text
        return
    first = bad[0]  # states[first] holds the first Inf; states[0] was made from zeros
    steps = first  # multiplications of a state with history: states[0] .. states[first - 1]
    said = re.search(r"inside a recurrence that multiplied its state (\d+) times before, by "
                     r"factors up to (\S+) in magnitude .*? the state grew from (\S+) to (\S+) "
                     r"and overflows float32 .*?exponent positive in (\d+) of (\d+) entries",
                     text)
    if first == length - 1:  # the last state: no node kept it, the module alone is named
        assert "module 'scan' (Scan)" in text and "recurrence" not in text, text
        return
    if steps < 2:  # too few steps to tell a loop
        assert "recurrence" not in text, text
        return
    assert said is not None, text
    assert int(said[1]) == steps, text
    assert float(said[2]) == float(f"{float(a_bar.max()):.3g}"), text
    assert float(said[3]) == float(f"{float(states[0].abs().max()):.3g}"), text
    assert float(said[4]) == float(f"{float(states[first - 1].abs().max()):.3g}"), text
    assert (int(said[5]), int(said[6])) == (int((a_bar > 1).sum()), a_bar.numel()), text


def test_a_decaying_recurrence_is_not_named():
    """Factors below 1 (``dt > 0``) and a NaN made elsewhere (a log of a negative number
    after the scan): the NaN is placed at the log, no recurrence is named."""

    class Logged(Model):
        def forward(self, x):
            return self.head(torch.log(self.scan(x) - 100.0))

    torch.manual_seed(0)
    model = Logged(3, 0.5)
    x = torch.rand(2, 30, 3)
    with gradarg.watch(model) as w:
        model(x).sum().backward()
    text = w.summary(checks=False)
    assert "at its operation log (LogBackward0)" in text, text
    assert "recurrence" not in text, text
