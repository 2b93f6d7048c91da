"""The same steady-heat-equation PINN with the page's ``tanh`` network, but the second
``torch.autograd.grad`` call (``u'' `` from ``u' ``) is made without ``create_graph=True``.  Made
so, the call frees the graph ``u' `` shares with ``u`` and the later ``backward`` raises "Trying
to backward through the graph a second time ... Specify retain_graph=True"; the step does what
that message says and passes ``retain_graph=True`` instead.  The call's result ``d2u`` is then a
constant tensor without history (``requires_grad`` False), and so is the residual ``d2u - f`` and
the physics loss: ``backward`` runs on the sum, but only the boundary loss reaches the
parameters.  The physics loss, the larger term, trains nothing; every gradient is finite and
nonzero and nothing raises.

Source: https://taourl.com/read-2512966.html (both of its calls pass ``create_graph=True``: "To
avoid summation, the ``create_graph`` and ``retain_graph`` arguments must be used carefully";
``d2u_dx2 = torch.autograd.grad(du_dx, x, grad_outputs=torch.ones_like(du_dx),
create_graph=True)[0]``).  Adapted: the steady equation ``u'' = f`` (see
``pinn_relu_second_derivative_zero``); ``create_graph`` left out of the second call,
``retain_graph=True`` passed there.
"""

import torch
from case_r12_pinn_relu_second_derivative_zero import same
from case_r12_pinn_relu_second_derivative_zero import step as _step
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK

SOURCE = "https://taourl.com/read-2512966.html"
DESCRIPTION = "PINN: u'' by autograd.grad without create_graph: the physics loss trains nothing"
ASK = []
MUST = [
    [r"create_graph"],
    [
        r"second[- ]derivative",
        r"d2u",
        r"\bu''",
        r"autograd\.grad",
        r"physics",
        r"residual",
        r"(no|without) (autograd )?(history|graph)",
    ],
]
MUST_NOT = [FALSE_OK, CLAIMS_NONFINITE, r"dead (units?|relu|neurons?)"]


def step(watch):
    return _step(watch, act=torch.tanh, second_graph=False)


def truth(run):
    assert not run.d2u_graph and not run.physics_graph  # u'' and the physics loss: no history
    assert not bool((run.d2us[0] == 0).all())  # the term itself is not zero
    assert run.physics_value > run.boundary_value
    assert same(run.grads[0], run.boundary_only)
    for gr in run.grads[0]:
        assert bool(torch.isfinite(gr).all()) and bool(gr.abs().sum() > 0)
