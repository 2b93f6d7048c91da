"""A shallow highway network (three highway layers of 32 units) with the transform gates' biases
filled with -13, the value the source uses for a 100-layer network.  The gate ``T =
sigmoid(W_T x + b_T)`` starts near ``sigmoid(-13) = 2.3e-6``, so each layer carries its input
almost unchanged: the transform branch ``H`` is multiplied by about 2e-6 in the forward and its
gradient by the same factor, and the gate's own gradient passes through ``sigmoid'(-13)``, about
2e-6 as well.  Every gradient is finite and nonzero, but the transform and gate weights get less
than 1e-4 of the head's gradient (asserted): those layers barely train.  Nothing raises.

Source: https://discuss.pytorch.org/t/difficulty-implementing-highway-networks/6920 ("I remember,
from the highway network paper, that if you go deep (50-100 layers), you need to initialize the
bias of the transform gate to a very small negative number (-7, -15...)"; ``BIAS_INIT = -13``,
``self.gate.bias.data.fill_(BIAS_INIT)``).  Adapted: fully connected highway layers (``H`` a
``Linear(32, 32)`` with ``Tanh``, ``T`` a ``Linear(32, 32)`` with a sigmoid, ``y = H T + x (1 -
T)``) after a ``Linear(16, 32), Tanh`` input layer and before a ``Linear(32, 1)`` head, a
regression on 256 examples, MSE, SGD at 0.05.
"""

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://discuss.pytorch.org/t/difficulty-implementing-highway-networks/6920"
DESCRIPTION = (
    "3 highway layers with gate bias -13: T ~ 2e-6, transform and gate weights barely train"
)
ASK = []
MUST = [
    [
        r"gate[^\n]{0,80}(bias|-13|closed|saturat|near(ly)? (0|zero)|sigmoid)",
        r"(bias|-13)[^\n]{0,80}gate",
        r"-13\b",
        r"sigmoid[^\n]{0,60}(saturat|near(ly)? (0|zero)|tiny|small)",
        r"vanish\w*",
        r"(tiny|very small|negligible)[^\n]{0,40}gradient",
        r"gradients?[^\n]{0,40}(tiny|very small|negligible|1e-0?[5-9])",
    ]
]
MUST_NOT = [
    FALSE_OK,
    CLAIMS_NONFINITE,
    r"\bdead\b",
    r"requires_grad\s*(=|is|was)?\s*False",
    r"not in (the |any )?optimi[sz]er",
    r"explod\w*",
]
LAYERS = 3


class Highway(nn.Module):
    def __init__(self, width, gate_bias):
        super().__init__()
        self.H = nn.Linear(width, width)
        self.T = nn.Linear(width, width)
        with torch.no_grad():
            self.T.bias.fill_(gate_bias)

    def forward(self, x):
        t = torch.sigmoid(self.T(x))
        return torch.tanh(self.H(x)) * t + x * (1 - t), t


class HighwayNet(nn.Module):
    def __init__(self, gate_bias):
        super().__init__()
        self.inp = nn.Linear(16, 32)
        self.layers = nn.ModuleList(Highway(32, gate_bias) for _ in range(LAYERS))
        self.head = nn.Linear(32, 1)

    def forward(self, x):
        h, gates = torch.tanh(self.inp(x)), []
        for layer in self.layers:
            h, t = layer(h)
            gates.append(t)
        return self.head(h), gates


def data():
    g = torch.Generator().manual_seed(1)
    x = torch.randn(256, 16, generator=g)
    y = torch.tanh(x[:, :4]).prod(1, keepdim=True) + 0.5 * x[:, 4:5]
    return x, y


def step(watch, gate_bias=-13.0):
    torch.manual_seed(0)
    model = HighwayNet(gate_bias)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    x, y = data()
    with watch(model) as w:
        optimizer.zero_grad()
        out, gates = model(x)
        F.mse_loss(out, y).backward()
        grads = {n: p.grad.detach().clone() for n, p in model.named_parameters()}
        optimizer.step()
    return Run(w=w, grads=grads, gates=[float(t.detach().mean()) for t in gates])


def ratios(run):
    head = run.grads["head.weight"].norm()
    return {
        n: float(g.norm() / head)
        for n, g in run.grads.items()
        if n.startswith("layers.") and n.endswith("weight")
    }


def truth(run):
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
    assert all(t < 1e-5 for t in run.gates)
    assert len(ratios(run)) == 2 * LAYERS
    assert all(r < 1e-4 for r in ratios(run).values())
