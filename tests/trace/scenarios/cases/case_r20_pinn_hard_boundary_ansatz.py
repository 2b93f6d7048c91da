"""A healthy physics-informed step with the boundary conditions imposed by construction: the
solution of ``u'' = -pi^2 sin(pi x)`` on [0, 1] with ``u(0) = u(1) = 0`` is sought as ``u(x) = x (1
- x) N(x)``, so the boundary values are exactly 0 for any weights.  The second derivative is taken
with ``torch.autograd.grad(..., create_graph=True)`` twice; the boundary term the writer kept in
the loss is identically 0 and contributes an exactly zero gradient, which is right: every
parameter's gradient is the residual's, finite and nonzero.  Nothing is wrong.

Source: https://xed.ro/posts/neural-networks-solving-pdes-boundary-conditions/ ("They treat
boundary conditions as an optimization target. And boundary conditions are not optimization
targets. They're constraints."; "Random points sample the interior, sample the boundary.
Automatic differentiation computes whatever derivatives the PDE requires").  Adapted: the page
argues for constraints; here the classical way to impose Dirichlet conditions by construction
(``x (1 - x) N(x)``), ``N`` a ``Linear(1, 32)``, ``Tanh``, ``Linear(32, 32)``, ``Tanh``,
``Linear(32, 1)`` MLP, 64 interior collocation points, the soft boundary term (weight 10) left in
the loss, Adam at 1e-3.
"""

import math

import torch
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK, Run
from torch import nn

SOURCE = "https://xed.ro/posts/neural-networks-solving-pdes-boundary-conditions/"
DESCRIPTION = "healthy: PINN with u = x(1-x)N(x): boundary term exactly 0, residual trains"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    r"\bdead\b",
    r"all[- ]zero",
    r"(without|no|missing) create_graph",
]
BC_WEIGHT = 10.0


class HardBC(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(
            nn.Linear(1, 32), nn.Tanh(), nn.Linear(32, 32), nn.Tanh(), nn.Linear(32, 1)
        )

    def forward(self, x):
        return x * (1 - x) * self.net(x)


def residual_loss(model, x):
    x = x.clone().requires_grad_(True)
    u = model(x)
    du = torch.autograd.grad(u.sum(), x, create_graph=True)[0]
    d2u = torch.autograd.grad(du.sum(), x, create_graph=True)[0]
    return (d2u + math.pi**2 * torch.sin(math.pi * x)).pow(2).mean()


def boundary_loss(model):
    return model(torch.tensor([[0.0], [1.0]])).pow(2).mean()


def step(watch):
    torch.manual_seed(0)
    model = HardBC()
    start = {n: p.detach().clone() for n, p in model.named_parameters()}
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    g = torch.Generator().manual_seed(1)
    x = torch.rand(64, 1, generator=g)
    with watch(model) as w:
        optimizer.zero_grad()
        bc = boundary_loss(model)
        loss = residual_loss(model, x) + BC_WEIGHT * bc
        loss.backward()
        grads = {n: p.grad.detach().clone() for n, p in model.named_parameters()}
        optimizer.step()
    return Run(w=w, model=model, start=start, bc=bc.item(), grads=grads, x=x)


def truth(run):
    assert run.bc == 0.0  # the boundary values are 0 by construction
    ref = HardBC()
    ref.load_state_dict(run.start)
    bc_grads = torch.autograd.grad(boundary_loss(ref), list(ref.parameters()), allow_unused=True)
    assert all(g is None or bool((g == 0).all()) for g in bc_grads)  # the term adds nothing
    res_grads = torch.autograd.grad(residual_loss(ref, run.x), list(ref.parameters()))
    params = dict(run.model.named_parameters())
    for (n, g), r in zip(run.grads.items(), res_grads, strict=True):
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
        assert torch.allclose(g, r, atol=1e-6), n  # the residual's gradient
        assert not torch.equal(params[n].detach(), run.start[n]), n
