"""A healthy recipe whose gradients look vanishing: residual blocks ``x + gamma * F(LN(x))`` with
LayerScale, a learnable per-channel ``gamma`` initialised to 1e-5 (the value the paper gives for a
24-layer network).  The branches' weights reach the loss only through ``gamma``, so their
gradients are about 1e-5 times what they would otherwise be, far below the head's and the
``gamma``s' own; that is the point of the method (each block starts near the identity), and Adam,
which normalises each parameter's step, moves them at the learning rate anyway.  Every gradient is
finite and nonzero and the loss falls after the step.

Source: https://paperswithcode.com/method/layerscale ("It adds a learnable diagonal matrix on
output of each residual block, initialized close to (but not at) 0"; "The diagonal values are all
initialized to a fixed small value epsilon: we set it to epsilon=0.1 until depth 18, epsilon=10^-5
for depth 24 and epsilon=10^-6 for deeper networks").  Adapted: an MLP in place of attention and
feed-forward blocks: a ``Linear(8, 32)`` stem, six blocks ``F = Linear(32, 64), GELU, Linear(64,
32)`` behind ``LayerNorm(32)``, a final ``LayerNorm`` and a ``Linear(32, 3)`` head, 128 examples,
Adam at 1e-3.
"""

import torch
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://paperswithcode.com/method/layerscale"
DESCRIPTION = "healthy: LayerScale gamma = 1e-5: branch weights' gradients ~1e-5 smaller, by design"
ASK = []
MUST = [[HEALTHY_OK, r"layer ?scale", r"\bgamma\b", r"1e-0?5", r"small init\w*"]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    r"\bdead\b",
    r"vanish\w*",
    r"all[- ]zero",
    r"requires_grad\s*(=|is|was)?\s*False",
]


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln = nn.LayerNorm(32)
        self.f = nn.Sequential(nn.Linear(32, 64), nn.GELU(), nn.Linear(64, 32))
        self.gamma = nn.Parameter(1e-5 * torch.ones(32))

    def forward(self, x):
        return x + self.gamma * self.f(self.ln(x))


class LayerScaleNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Linear(8, 32)
        self.blocks = nn.Sequential(*[Block() for _ in range(6)])
        self.norm = nn.LayerNorm(32)
        self.head = nn.Linear(32, 3)

    def forward(self, x):
        return self.head(self.norm(self.blocks(self.stem(x))))


def data():
    g = torch.Generator().manual_seed(1)
    x = torch.randn(128, 8, generator=g)
    return x, (x[:, :3] * x[:, 3:6]).argmax(1)


def step(watch):
    torch.manual_seed(0)
    model = LayerScaleNet()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    x, y = data()
    with watch(model) as w:
        optimizer.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        grads = {n: p.grad.detach().clone() for n, p in model.named_parameters()}
        optimizer.step()
    with torch.no_grad():
        after = F.cross_entropy(model(x), y).item()
    return Run(w=w, grads=grads, loss=loss.item(), after=after)


def truth(run):
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
    for i in range(6):
        gamma = float(run.grads[f"blocks.{i}.gamma"].abs().max())
        for n in ("f.0.weight", "f.2.weight"):
            assert float(run.grads[f"blocks.{i}.{n}"].abs().max()) < 1e-3 * gamma, (i, n)
    assert run.after < run.loss
