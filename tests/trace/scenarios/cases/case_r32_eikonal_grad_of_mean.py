"""A neural signed distance function fitted to a circle with an eikonal regulariser whose spatial
gradient is taken of the mean of the network's outputs: ``torch.autograd.grad(f(x).mean(), x,
create_graph=True)``.  The points do not interact, so each point's row of that gradient is its own
``grad_x f`` divided by the number of points, 256: the network's slopes are 0.7 to 1.8, the norms the
eikonal term compares with 1 are about 0.005, the term is about 0.99 whatever the network does, and
its gradient asks the network to make its slope 256 times steeper than a distance function's,
against the surface term.  Every gradient is finite and nonzero, the loss is finite; nothing raises.

Source: https://www.emergentmind.com/topics/eikonal-loss ("Eikonal loss is a functional penalizing
the deviation of a function's gradient norm from prescribed values, most universally ||grad phi||=1,
and is a central tool in applications ranging from physics-informed neural networks for solving the
eikonal equation, to implicit neural representations of shapes").  Adapted: a 2-D SDF MLP as IGR's,
``Linear(2, 64)``, three hidden layers with ``Softplus(beta=100)``, ``Linear(64, 1)``, with IGR's
geometric initialisation (the network starts near ``|x| - 0.5``, its slopes near 1); 128 points on
a circle of radius 0.5 (loss ``|f|``) and 256 uniform points in the square for the eikonal term
(weight 0.1); Adam at 1e-3.
"""

import math

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn

SOURCE = "https://www.emergentmind.com/topics/eikonal-loss"
DESCRIPTION = "eikonal term from autograd.grad(f(x).mean(), x): per-point gradients divided by N"
ASK = []
MUST = [
    [r"\.mean\(\)|\bmean\b", r"reduc\w*", r"\b1 ?/ ?N\b|divided by (the number of points|N|256)"],
    [
        r"\.sum\(\)|\bsum\b|grad_outputs|ones_like",
        r"per[- ]point|each point",
        r"eikonal",
        r"\b256\b",
        r"(input|spatial) gradient",
    ],
]
MUST_NOT = [
    FALSE_OK,
    CLAIMS_NONFINITE,
    r"\bdead\b",
    r"(without|no|missing|lacks?) (the )?create_graph",
]
SURFACE, SPACE, WEIGHT = 128, 256, 0.1


def sdf_net():
    layers, width = [], 2
    for _ in range(3):
        layers += [nn.Linear(width, 64), nn.Softplus(beta=100)]
        width = 64
    net = nn.Sequential(*layers, nn.Linear(64, 1))
    with torch.no_grad():  # IGR's geometric initialisation: f(x) starts near |x| - 0.5
        for layer in net[:-1:2]:
            layer.weight.normal_(0.0, math.sqrt(2) / math.sqrt(64))
            layer.bias.zero_()
        net[-1].weight.normal_(math.sqrt(math.pi) / math.sqrt(64), 1e-4)
        net[-1].bias.fill_(-0.5)
    return net


def data():
    g = torch.Generator().manual_seed(1)
    angle = 2 * math.pi * torch.rand(SURFACE, generator=g)
    surface = 0.5 * torch.stack([torch.cos(angle), torch.sin(angle)], -1)
    return surface, 2 * torch.rand(SPACE, 2, generator=g) - 1


def spatial_gradient(f, x, of_sum):
    out = f.sum() if of_sum else f.mean()
    return torch.autograd.grad(out, x, create_graph=True)[0]


def step(watch, of_sum=False):
    torch.manual_seed(0)
    model = sdf_net()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    surface, space = data()
    probe = space.clone().requires_grad_()  # each point's own grad_x f, before the step
    point_norms = torch.autograd.grad(model(probe).sum(), probe)[0].norm(dim=-1)
    with watch(model) as w:
        optimizer.zero_grad()
        x = space.clone().requires_grad_()
        grad_x = spatial_gradient(model(x), x, of_sum)
        eikonal = ((grad_x.norm(dim=-1) - 1) ** 2).mean()
        loss = model(surface).abs().mean() + WEIGHT * eikonal
        loss.backward()
        grads = {n: p.grad.detach().clone() for n, p in model.named_parameters()}
        optimizer.step()
    return Run(
        w=w, grads=grads, loss=float(loss.detach()), eikonal=float(eikonal.detach()),
        used_norms=grad_x.detach().norm(dim=-1), point_norms=point_norms,
    )  # fmt: skip


def truth(run):
    assert math.isfinite(run.loss)
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
    assert 0.5 < float(run.point_norms.mean()) < 2  # the network's own slopes
    assert torch.allclose(run.used_norms * SPACE, run.point_norms, rtol=1e-4)
    assert run.eikonal > 0.98
