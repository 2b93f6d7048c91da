"""A point-cloud decoder (a fixed latent code -> MLP -> 24 points in 3-D) fitted to a target cloud
of 24 points on the unit sphere with a one-sided Chamfer loss: for each target point, the squared
distance to its nearest predicted point, ``cdist(target, pred).pow(2).min(dim=1)`` averaged.  The
``min`` passes gradient to the chosen predicted point only: the 12 predicted points that are no
target's nearest get an exactly zero gradient, and so do their rows of the output layer
(``2.weight`` rows ``3k .. 3k + 2`` and ``2.bias`` entries) on the first step.  Those points are
never pulled toward the shape; the term that would pull them, each predicted point's distance to
its nearest target, is missing.  Nothing raises and every gradient is finite.

Source: https://parkcheolhee-lab.github.io/chamfer-distance ("The left term computes the distance
from each p to the nearest q ... Since the terms are symmetric, the right term performs the same
operation, finding the distance from each q to the nearest p").  Adapted: the step keeps one of
the two terms (the control, ``chamfer_symmetric``, keeps both).
"""

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://parkcheolhee-lab.github.io/chamfer-distance"
DESCRIPTION = "one-sided Chamfer (target -> nearest pred): 12 of 24 predicted points get zero grad"
ASK = ["2.weight"]
MUST = [
    [r"2\.(weight|bias)"],
    [
        r"\bmin\b",
        r"\bmin(imum)?\(",
        r"nearest",
        r"chamfer",
        r"one[- ]sided",
        r"one direction",
        r"argmin",
        r"cdist",
    ],
]
MUST_NOT = [FALSE_OK, CLAIMS_NONFINITE, r"dead (units?|relu|neurons?)", r"no_grad", r"detach"]
POINTS = 24


def step(watch, symmetric: bool = False):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 32), nn.Tanh(), nn.Linear(32, POINTS * 3))
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    g = torch.Generator().manual_seed(1)
    code = torch.randn(1, 8, generator=g)
    target = F.normalize(torch.randn(POINTS, 3, generator=g), dim=1)
    grads, nearest = [], []
    with watch(model) as w:
        for _ in range(2):
            opt.zero_grad()
            pred = model(code).view(POINTS, 3)
            d = torch.cdist(target, pred).pow(2)  # (targets, predictions)
            loss = d.min(dim=1).values.mean()
            if symmetric:
                loss = loss + d.min(dim=0).values.mean()
            loss.backward()
            nearest.append(d.argmin(dim=1))
            grads.append({n: p.grad.detach().clone() for n, p in model.named_parameters()})
            opt.step()
    return Run(w=w, grads=grads, nearest=nearest)


def rows(gr, k):
    return gr[3 * k : 3 * k + 3]


def truth(run):
    chosen = set(run.nearest[0].tolist())
    unmatched = [k for k in range(POINTS) if k not in chosen]
    assert len(unmatched) >= 6
    w, b = run.grads[0]["2.weight"], run.grads[0]["2.bias"]
    for k in range(POINTS):
        zero = bool((rows(w, k) == 0).all()) and bool((rows(b, k) == 0).all())
        assert zero == (k in unmatched), k
    for grads in run.grads:
        for n, gr in grads.items():
            assert bool(torch.isfinite(gr).all()), n
