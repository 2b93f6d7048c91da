"""A flow-matching step that mixes the two time conventions: the interpolant is written with data at
``t = 0`` and noise at ``t = 1``, ``z_t = (1 - t) x1 + t z0`` (the convention of rectified-flow and
MeanFlow write-ups), while the regression target is the velocity of the other convention, ``x1 -
z0``, which goes with ``z_t = (1 - t) z0 + t x1``.  Along the path actually sampled the velocity is
``dz_t/dt = z0 - x1``: the network is trained to predict exactly its opposite at every point, and
integrating it from noise at ``t = 0`` carries the samples away from the data.  The loss is an
ordinary mean squared error, every gradient is finite and nonzero, nothing raises.

Source: https://stevengong.co/research-papers/Mean-Flows-for-Onestep-Generative-Modeling ("Flow
Matching essentially models the expectation over all possibilities, called the marginal velocity";
"In practice, we just use the forward euler integration method"; "even when the conditional flows
are designed to be straight ('rectified'), the marginal velocity field (Eq. (1)) typically induces a
curved trajectory").  Adapted: the interpolant in MeanFlow's convention (data at ``t = 0``) with the
target of the conditional flow-matching primer (``x1 - z0``); 256 points of a 2-D mixture of four
Gaussians at ``(+-2, +-2)``, a velocity network ``Linear(3, 64), GELU, Linear(64, 64), GELU,
Linear(64, 2)`` on ``(z_t, t)``, Adam at 1e-3.
"""

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://stevengong.co/research-papers/Mean-Flows-for-Onestep-Generative-Modeling"
DESCRIPTION = "flow matching z_t = (1 - t) x1 + t z0 with target x1 - z0: target is -dz_t/dt"
ASK = []
MUST = [
    [r"velocit\w*", r"target", r"interpol\w*", r"flow[- ]matching"],
    [
        r"sign\w*[^\n]{0,40}(flip\w*|wrong|invert\w*|revers\w*|opposite)",
        r"(flip\w*|wrong|invert\w*|revers\w*|opposite)[^\n]{0,40}(sign|direction|velocit\w*)",
        r"convention\w*",
        r"z0 - x1|x1 - z0|x_?0 - x_?1|x_?1 - x_?0",
        r"(t ?= ?0|t ?= ?1)[^\n]{0,60}(noise|data)",
    ],
]
MUST_NOT = [FALSE_OK, CLAIMS_NONFINITE, r"\bdead\b"]


class Velocity(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(
            nn.Linear(3, 64), nn.GELU(), nn.Linear(64, 64), nn.GELU(), nn.Linear(64, 2)
        )

    def forward(self, z, t):
        return self.net(torch.cat([z, t], 1))


def batch():
    g = torch.Generator().manual_seed(1)
    centres = torch.tensor([[2.0, 2.0], [2.0, -2.0], [-2.0, 2.0], [-2.0, -2.0]])
    x1 = centres[torch.randint(0, 4, (256,), generator=g)] + 0.3 * torch.randn(256, 2, generator=g)
    z0 = torch.randn(256, 2, generator=g)
    t = torch.rand(256, 1, generator=g)
    return x1, z0, t


def step(watch, noise_at_zero=False):
    torch.manual_seed(0)
    model = Velocity()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    x1, z0, t = batch()

    def path(s):
        if noise_at_zero:
            return (1 - s) * z0 + s * x1
        return (1 - s) * x1 + s * z0

    target = x1 - z0
    with watch(model) as w:
        optimizer.zero_grad()
        loss = F.mse_loss(model(path(t), t), target)
        loss.backward()
        grads = {n: p.grad.detach().clone() for n, p in model.named_parameters()}
        optimizer.step()
    velocity = (path(t + 1e-2) - path(t)) / 1e-2  # the path is linear in t
    return Run(w=w, model=model, target=target, velocity=velocity, grads=grads)


def truth(run):
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
    cosine = F.cosine_similarity(run.target, run.velocity, dim=1)
    assert bool((cosine < -0.999).all())  # the target is the opposite of the path's velocity
