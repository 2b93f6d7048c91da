"""Control: the steady-heat-equation PINN as the page writes it: ``fc1`` -> ``tanh`` -> ``fc2``,
both derivatives taken with ``torch.autograd.grad(..., create_graph=True)``, the residual's mean
square plus the boundary loss.  ``d2u/dx2`` is nonzero and carries history, the physics loss gives
``fc1`` and ``fc2.weight`` a nonzero gradient (``u''`` does not depend on ``fc2.bias``), and the
step's gradient is the sum of both terms'; every
parameter gets a finite, nonzero gradient over the two Adam steps.

Source: https://taourl.com/read-2512966.html (``x = torch.tanh(self.fc1(x))``; ``du_dx =
torch.autograd.grad(u, x, grad_outputs=torch.ones_like(u), create_graph=True)[0]``; ``d2u_dx2 =
torch.autograd.grad(du_dx, x, grad_outputs=torch.ones_like(du_dx), create_graph=True)[0]``).
Adapted: the steady equation ``u'' = f`` with two boundary points.
"""

import torch
from case_r12_pinn_relu_second_derivative_zero import same
from case_r12_pinn_relu_second_derivative_zero import step as _step
from scenario_kit import CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = "https://taourl.com/read-2512966.html"
DESCRIPTION = "control: tanh PINN, create_graph=True on both derivatives: physics loss trains"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    r"(without|no|missing|forgot\w*)[^\n]{0,20}create_graph",
    r"create_graph[^\n]{0,20}(missing|not set|False)",
    r"dead (units?|relu|neurons?)",
    r"all-zero",
]


def step(watch):
    return _step(watch, act=torch.tanh, second_graph=True)


def truth(run):
    assert run.d2u_graph and run.physics_graph
    assert not bool((run.d2us[0] == 0).all())
    # the physics loss reaches fc1 and fc2.weight (u'' does not depend on fc2.bias)
    assert all(bool(g.abs().sum() > 0) for g in run.physics_grads[:3])
    assert not same(run.grads[0], run.boundary_only)
    for grads in run.grads:
        for gr in grads:
            assert bool(torch.isfinite(gr).all()) and bool(gr.abs().sum() > 0)
