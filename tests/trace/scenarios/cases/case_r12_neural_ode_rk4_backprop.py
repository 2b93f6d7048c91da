"""Control, a recipe: a neural ODE fitted to a spiral trajectory by backpropagating straight
through a fixed-step RK4 solver written in torch (20 steps over [0, 2]), the dynamics a small
``Tanh`` MLP.  The solver is a chain of ordinary tensor operations, so autograd gives the exact
gradient of the discretised solution: on a float64 copy it matches a central finite difference to
better than 1e-9 relative, and every parameter gets a finite, nonzero gradient over the two Adam steps.

Source: https://torchode.readthedocs.io/en/latest/backprop/ ("The first is to backpropagate
straight through the solver.  After all, an ODE solver is just a series of simple operations that
define a dynamic computation graph that can be backpropagated through with pytorch's autograd ...
In general, this is the preferred method as long as you have enough memory, because it is fast and
gives accurate gradients").  Adapted: a hand-written RK4 instead of torchode's solvers.
"""

import copy

import torch
from scenario_kit import CLAIMS_NONFINITE, HEALTHY_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://torchode.readthedocs.io/en/latest/backprop/"
DESCRIPTION = "control: neural ODE, backprop through a torch RK4 solver: exact gradient, trains"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [CLAIMS_NONFINITE, r"all-zero", r"no gradient", r"vanish", r"explod"]
A_TRUE = torch.tensor([[-0.1, 2.0], [-2.0, -0.1]])


def rk4(f, y0, t):
    ys, y = [y0], y0
    for i in range(len(t) - 1):
        h = t[i + 1] - t[i]
        k1 = f(y)
        k2 = f(y + h / 2 * k1)
        k3 = f(y + h / 2 * k2)
        k4 = f(y + h * k3)
        y = y + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
        ys.append(y)
    return torch.stack(ys)


def step(watch):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(2, 16), nn.Tanh(), nn.Linear(16, 2))
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    t = torch.linspace(0, 2, 21)
    y0 = torch.tensor([[2.0, 0.0]])
    with torch.no_grad():
        true_y = rk4(lambda y: y @ A_TRUE.T, y0, t)

    # the exact gradient, checked on a float64 copy against a central finite difference
    m64 = copy.deepcopy(model).double()

    def loss64():
        return F.mse_loss(rk4(m64, y0.double(), t.double()), true_y.double())

    analytic = torch.autograd.grad(loss64(), [m64[2].bias])[0][0].item()
    eps = 1e-6
    with torch.no_grad():
        m64[2].bias[0] += eps
        up = loss64().item()
        m64[2].bias[0] -= 2 * eps
        down = loss64().item()
    numeric = (up - down) / (2 * eps)

    grads, losses = [], []
    with watch(model) as w:
        for _ in range(2):
            opt.zero_grad()
            loss = F.mse_loss(rk4(model, y0, t), true_y)
            loss.backward()
            grads.append({n: p.grad.detach().clone() for n, p in model.named_parameters()})
            losses.append(loss.item())
            opt.step()
    return Run(w=w, grads=grads, losses=losses, analytic=analytic, numeric=numeric)


def truth(run):
    assert abs(run.analytic - run.numeric) <= 1e-6 * abs(run.numeric)
    for grads in run.grads:
        for n, gr in grads.items():
            assert bool(torch.isfinite(gr).all()) and bool(gr.abs().sum() > 0), n
    assert run.losses[1] < run.losses[0]
