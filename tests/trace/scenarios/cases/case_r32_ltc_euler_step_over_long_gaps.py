"""A liquid time-constant (LTC) cell run over irregularly sampled series, one forward-Euler step per
reading, ``h + dt (-h / tau_sys + A f)``, with ``dt`` the time since the previous reading.  Half of
the gaps are 8 time units (dropouts between readings 0.1 apart) while the cell's time constants are
0.6 to 1.3: an explicit Euler step is stable only while ``dt / tau_sys < 2``, and each long gap
multiplies the state by ``1 - dt / tau_sys``, between -5 and -13.  The state grows by orders of
magnitude at each long gap, overflows float32 between the 72nd and 114th of the 128 readings
(``inf``, then ``inf - inf = NaN``), and the loss and every parameter's gradient are NaN.  Nothing
raises.

Source: https://soveshmohapatra.com/projects/lnns-live-code ("To run a Liquid Time-Constant (LTC)
network on digital hardware, we must approximate its continuous differential equations using a
discrete numerical solver"; "We can discretize this using the forward Euler method"; its
``LiquidLayer``: ``tau_sys = tau_val / (1.0 + tau_val * f)``, ``dx_dt = - (state / tau_sys) +
self.A * f``, ``new_state = state + self.dt * dx_dt``).  Adapted: ``dt`` passed per reading (the
page fixes it at 0.1); 8 units, a readout ``Linear(8, 1)`` at every reading, 16 series of 128
readings of ``sin(t)`` plus noise with ``cos(t)`` as target, gaps of 0.1 or 8 with equal odds; MSE,
Adam at 1e-3.
"""

import math

import torch
from scenario_kit import FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://soveshmohapatra.com/projects/lnns-live-code"
DESCRIPTION = "LTC forward-Euler step over gaps dt = 8 > 2 tau_sys: state overflows, NaN loss"
ASK = []
MUST = [
    [r"\bnan\b|\binf\b|non-?finite|infinit\w*|overflow\w*"],
    [
        r"euler",
        r"\bdt\b|time ?step|step size|\bgaps?\b",
        r"stiff\w*|(un)?stab\w*|instab\w*",
        r"explicit|solver|integrat\w*",
        r"tau|time[- ]constant",
        r"recurren\w*|grow\w*|factors?",
    ],
]
MUST_NOT = [FALSE_OK, r"\bdead\b", r"requires_grad\s*(=|is|was)?\s*False"]
UNITS, LENGTH = 8, 128


class LiquidCell(nn.Module):
    def __init__(self, fused):
        super().__init__()
        self.fused = fused
        self.fc = nn.Linear(1 + UNITS, UNITS)
        self.A = nn.Parameter(torch.randn(UNITS))
        self.tau = nn.Parameter(torch.ones(UNITS))

    def forward(self, x, state, dt):
        f = torch.sigmoid(self.fc(torch.cat([x, state], 1)))
        tau_val = F.softplus(self.tau)
        if self.fused:  # the LTC paper's fused (semi-implicit) step
            return (state + dt * self.A * f) / (1 + dt * (1 / tau_val + f))
        tau_sys = tau_val / (1.0 + tau_val * f)
        return state + dt * (-(state / tau_sys) + self.A * f)


class LTC(nn.Module):
    def __init__(self, fused):
        super().__init__()
        self.cell = LiquidCell(fused)
        self.readout = nn.Linear(UNITS, 1)

    def forward(self, x, gaps):
        state, states = torch.zeros(x.shape[0], UNITS), []
        for t in range(x.shape[1]):
            state = self.cell(x[:, t], state, gaps[:, t : t + 1])
            states.append(state)
        states = torch.stack(states, 1)
        return self.readout(states), states


def data():
    g = torch.Generator().manual_seed(1)
    gaps = torch.where(torch.rand(16, LENGTH, generator=g) < 0.5, 8.0, 0.1)
    times = gaps.cumsum(1)
    x = torch.sin(times) + 0.1 * torch.randn(16, LENGTH, generator=g)
    return x[..., None], torch.cos(times)[..., None], gaps


def step(watch, fused=False):
    torch.manual_seed(0)
    model = LTC(fused)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    x, target, gaps = data()
    with watch(model) as w:
        optimizer.zero_grad()
        out, states = model(x, gaps)
        loss = F.mse_loss(out, target)
        loss.backward()
        grads = {n: p.grad.detach().clone() for n, p in model.named_parameters()}
        optimizer.step()
    return Run(w=w, grads=grads, loss=float(loss.detach()), states=states.detach())


def truth(run):
    bad = ~torch.isfinite(run.states).all(-1)  # (series, reading)
    assert bool(bad.any(1).all())  # every series overflows ...
    first = bad.float().argmax(1)
    assert int(first.min()) >= 60  # ... after a run of finite, growing states
    finite = run.states.masked_fill(~torch.isfinite(run.states), 0).abs().amax((0, 2))
    assert float(finite[:60].max()) > 1e10
    assert math.isnan(run.loss)
    for n, g in run.grads.items():
        assert bool(torch.isnan(g).any()), n
