"""The control of ``eikonal_grad_of_mean``: the same neural SDF and eikonal regulariser with the
spatial gradient taken of the sum of the outputs, ``torch.autograd.grad(f(x).sum(), x,
create_graph=True)``, which gives each point its own ``grad_x f``; the eikonal term compares those
norms with 1.  The loss and every gradient are finite and nonzero.  The step takes a first-order
derivative inside the loss with ``create_graph=True`` and back-propagates through it, as every
eikonal-regularised SDF does.

Source: https://arxiv.org/html/2411.14628v2 ("Learning neural signed distance function requires
designing loss functions so that the zero crossings of the implicit function are at the desired
locations (e.g., adhere to a sparse input point cloud), and that the implicit function returns the
correct signed distance"; "A common regularization loss used is the eikonal equation, which
constrains the gradient norm of an implicit func").  Adapted: the bug's network, points and
optimizer with the gradient of the sum.
"""

import torch
from case_r32_eikonal_grad_of_mean import SPACE
from case_r32_eikonal_grad_of_mean import step as _step
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = "https://arxiv.org/html/2411.14628v2"
DESCRIPTION = "control: eikonal term from autograd.grad(f(x).sum(), x, create_graph=True)"
ASK = []
MUST = [[HEALTHY_OK, r"create_graph\s*=\s*True|second[- ]order|double[- ]backward"]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    r"\bdead\b",
    r"all[- ]zero",
    r"(without|no|missing) create_graph",
    r"not in (the |any )?optimi[sz]er",
]


def step(watch):
    return _step(watch, of_sum=True)


def truth(run):
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
    assert torch.allclose(run.used_norms, run.point_norms, rtol=1e-4)
    assert not torch.allclose(run.used_norms * SPACE, run.point_norms, rtol=1e-1)
    assert run.eikonal < 0.9
