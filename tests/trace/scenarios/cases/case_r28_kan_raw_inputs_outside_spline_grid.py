"""A two-layer Kolmogorov-Arnold network, each edge ``phi(x) = w_b silu(x) + sum_i c_i B_i(x)``
with cubic B-splines on a fixed grid of 5 intervals over [-1, 1] (extended by 3 knots each side:
the bases are nonzero on [-2.2, 2.2] only), trained on raw sensor readings between 10 and 30.
Every input lies beyond the last knot, every B-spline basis is exactly 0 there: the first layer's
spline coefficients get an exactly-zero gradient and do not move; only the SiLU base weights train.
The first layer's outputs (between -33 and 15) miss the second layer's grid too, all but 8%: 40% of
``layer2.coef``'s entries get zero gradient.  Nothing raises, nothing is non-finite.

Source: https://stats.stackexchange.com/questions/650848/b-splines-in-kans-how-are-they-implemented
("Update of spline grids. We update each grid on the fly according to its input activations, to
address the issue that splines are defined on bounded regions but activation values can evolve out
of the fixed region during training"; "phi(x) = w_b b(x) + w_s spline(x)"; "spline(x) = sum_i c_i
B_i(x)").  Adapted: no grid update and inputs left in their units (three readings in [10, 30], a
smooth target of their standardised values), KAN ``[3, 5, 1]`` with the splines' coefficients
``c`` in ``layer1.coef`` and ``layer2.coef``, Adam at 1e-2.
"""

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = (
    "https://stats.stackexchange.com/questions/650848/b-splines-in-kans-how-are-they-implemented"
)
DESCRIPTION = "KAN on raw inputs in [10, 30], spline grid on [-1, 1]: B-splines 0, coef grads 0"
ASK = ["layer1.coef"]
MUST = [
    [r"spline", r"coef\w*", r"bas(is|es)"],
    [
        r"grid",
        r"\brange\b",
        r"outside|out of|beyond",
        r"standardi[sz]\w*|normali[sz]\w*|unscaled|raw (input|reading|value)s?",
        r"knots?",
    ],
]
MUST_NOT = [
    FALSE_OK,
    CLAIMS_NONFINITE,
    r"not in (the |any )?optimi[sz]er",
    r"requires_grad\s*(=|is|was)?\s*False",
    r"never (called|ran|run)",
]
INTERVALS, ORDER = 5, 3


def b_splines(x, grid):
    """Cox-de Boor: the ``INTERVALS + ORDER`` cubic bases at each input, (batch, in, bases)."""
    x = x[..., None]
    bases = ((x >= grid[:, :-1]) & (x < grid[:, 1:])).to(x.dtype)
    for p in range(1, ORDER + 1):
        left = (x - grid[:, : -(p + 1)]) / (grid[:, p:-1] - grid[:, : -(p + 1)])
        right = (grid[:, p + 1 :] - x) / (grid[:, p + 1 :] - grid[:, 1:-p])
        bases = left * bases[..., :-1] + right * bases[..., 1:]
    return bases


class KANLayer(nn.Module):
    def __init__(self, n_in, n_out):
        super().__init__()
        h = 2 / INTERVALS
        knots = torch.arange(-ORDER, INTERVALS + ORDER + 1) * h - 1
        self.register_buffer("grid", knots.repeat(n_in, 1))
        self.base = nn.Parameter(torch.randn(n_out, n_in) / n_in**0.5)
        self.coef = nn.Parameter(0.1 * torch.randn(n_out, n_in, INTERVALS + ORDER))

    def forward(self, x):
        spline = torch.einsum("bic,oic->bo", b_splines(x, self.grid), self.coef)
        return F.linear(F.silu(x), self.base) + spline


class KAN(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer1, self.layer2 = KANLayer(3, 5), KANLayer(5, 1)

    def forward(self, x):
        return self.layer2(self.layer1(x))


def data():
    g = torch.Generator().manual_seed(1)
    raw = 10 + 20 * torch.rand(128, 3, generator=g)
    z = (raw - raw.mean(0)) / raw.std(0)
    return raw, z, torch.sin(z[:, :1]) + z[:, 1:2] * z[:, 2:3]


def step(watch, standardise=False):
    torch.manual_seed(0)
    model = KAN()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    raw, z, target = data()
    x = z if standardise else raw
    before = {n: p.detach().clone() for n, p in model.named_parameters()}
    with watch(model) as w:
        optimizer.zero_grad()
        loss = F.mse_loss(model(x), target)
        loss.backward()
        grads = {n: p.grad.detach().clone() for n, p in model.named_parameters()}
        optimizer.step()
    return Run(w=w, model=model, before=before, grads=grads, x=x)


def truth(run):
    assert float(run.x.min()) >= 10  # every input beyond the grid's last knot (2.2)
    assert float(b_splines(run.x, run.model.layer1.grid).abs().max()) == 0.0
    assert bool((run.grads["layer1.coef"] == 0).all())
    assert torch.equal(run.model.layer1.coef.detach(), run.before["layer1.coef"])
    for n in ("layer1.base", "layer2.base"):
        g = run.grads[n]
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
