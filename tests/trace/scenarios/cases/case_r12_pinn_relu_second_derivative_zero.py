"""A physics-informed network for the steady 1D heat equation ``u''(x) = -pi**2 sin(pi x)`` on
[0, 1] with ``u(0) = u(1) = 0``, written as the page writes it (``fc1`` -> activation -> ``fc2``,
``torch.autograd.grad(..., create_graph=True)`` twice, the residual's mean square plus the
boundary loss) but with ``relu`` instead of ``tanh``.  A ReLU network is piecewise linear in its
input: its second derivative is 0 wherever it exists, and autograd returns exactly 0 for
``d2u/dx2`` at every collocation point (ReLU's backward, differentiated again, contributes
nothing).  The residual is the constant ``pi**2 sin(pi x)`` and the physics loss, though it is
the larger term, gives every parameter an exactly zero gradient: only the boundary loss trains
the network, which the physics never reaches.  Every gradient is finite and nonzero; nothing
raises.

Source: https://taourl.com/read-2512966.html ("How to Avoid Sum from 'autograd.grad' Output in
Physics Informed Neural Networks"; its network ``self.fc1 = nn.Linear(1, 20)``, ``self.fc2 =
nn.Linear(20, 1)``, ``x = torch.tanh(self.fc1(x))``; ``du_dx = torch.autograd.grad(u, x,
grad_outputs=torch.ones_like(u), create_graph=True)[0]``, ``d2u_dx2 = torch.autograd.grad(du_dx,
x, grad_outputs=torch.ones_like(du_dx), create_graph=True)[0]``).  Adapted: the page's residual is
written for a heat equation with a first-derivative term; the step uses the steady equation
``u'' = f`` with two boundary points, and swaps ``tanh`` for ``relu`` (the page's ``tanh`` is the
control, ``pinn_tanh_create_graph``).
"""

import math

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://taourl.com/read-2512966.html"
DESCRIPTION = "PINN with relu: autograd's d2u/dx2 is exactly 0, the physics loss adds no gradient"
ASK = []
MUST = [
    [r"relu"],
    [
        r"second[- ]derivative",
        r"d2u",
        r"\bu''",
        r"piecewise[- ]linear",
        r"(derivative|curvature)[^\n]{0,40}(zero|0\b|vanish)",
        r"higher[- ]order",
    ],
]
MUST_NOT = [FALSE_OK, CLAIMS_NONFINITE, r"no_grad", r"detach"]


class PINN(nn.Module):
    def __init__(self, act):
        super().__init__()
        self.act = act
        self.fc1 = nn.Linear(1, 20)
        self.fc2 = nn.Linear(20, 1)

    def forward(self, x):
        return self.fc2(self.act(self.fc1(x)))


def forcing(x):
    return -(math.pi**2) * torch.sin(math.pi * x)


def step(watch, act=torch.relu, second_graph: bool = True):
    torch.manual_seed(0)
    model = PINN(act)
    params = list(model.parameters())
    opt = torch.optim.Adam(params, lr=1e-2)
    x = torch.linspace(0, 1, 24, requires_grad=True).reshape(-1, 1)
    x_bc = torch.tensor([[0.0], [1.0]])

    def losses():
        u = model(x)
        du = torch.autograd.grad(u, x, grad_outputs=torch.ones_like(u), create_graph=True)[0]
        # without create_graph the call frees the graph du shares with u unless told to keep it
        d2u = torch.autograd.grad(
            du, x, grad_outputs=torch.ones_like(du), create_graph=second_graph, retain_graph=True
        )[0]
        physics = (d2u - forcing(x.detach())).pow(2).mean()
        boundary = F.mse_loss(model(x_bc), torch.zeros(2, 1))
        return physics, boundary, d2u

    physics, boundary, _ = losses()
    boundary_only = torch.autograd.grad(boundary, params)
    physics_grads = (
        torch.autograd.grad(physics, params, allow_unused=True, materialize_grads=True)
        if physics.requires_grad
        else None
    )
    d2us, grads = [], []
    with watch(model) as w:
        for _ in range(2):
            opt.zero_grad()
            physics, boundary, d2u = losses()
            loss = physics + boundary
            loss.backward()
            d2us.append(d2u.detach().clone())
            grads.append([p.grad.detach().clone() for p in params])
            opt.step()
    return Run(
        w=w,
        d2us=d2us,
        d2u_graph=d2u.requires_grad,
        physics_graph=physics_grads is not None,
        physics_grads=physics_grads,
        boundary_only=boundary_only,
        grads=grads,
        physics_value=physics.item(),
        boundary_value=boundary.item(),
    )


def same(a, b):
    return all(torch.allclose(x, y, rtol=1e-5, atol=1e-8) for x, y in zip(a, b, strict=True))


def truth(run):
    for d2u in run.d2us:
        assert bool((d2u == 0).all())  # the u'' the residual reads is identically zero
    assert run.physics_graph and all(bool((g == 0).all()) for g in run.physics_grads)
    assert run.physics_value > run.boundary_value  # the larger term, and it trains nothing
    assert same(run.grads[0], run.boundary_only)
    for grads in run.grads:
        for gr in grads:
            assert bool(torch.isfinite(gr).all()) and bool(gr.abs().sum() > 0)
