"""The control of ``deq_solver_no_grad_fixed_point_used``: the same deep equilibrium classifier,
the fixed point again found under ``torch.no_grad()`` (forty iterations, no graph kept), then ``f``
applied once more with the graph, ``z = f(z*, x)``: the "1-step gradient approximation" at the fixed
point.  The step looks odd (forty calls of the cell that record nothing, then one that does), but it
is the recipe: the loss reaches the cell, the injection and the head through that last application,
every parameter gets a finite, nonzero gradient and moves; ``z*`` is a fixed point to 1e-5.

Source: https://texonom.com/deep-equilibrium-models-291c3c96247d8084b5e9d9b4a556227f ("Once we
reach this fixed point after iterating (forward step), we can compute the gradient using IFT
(Implicit Function Theorem)"; "we can calculate the gradient using only the final fixed point,
without backpropagating through all recursion steps. -> This enables '1-step gradient
approximation'").  Adapted: the bug's model, data and optimizer with the one graph-carrying step.
"""

import torch
from case_r28_deq_solver_no_grad_fixed_point_used import step as _step
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = "https://texonom.com/deep-equilibrium-models-291c3c96247d8084b5e9d9b4a556227f"
DESCRIPTION = "control: DEQ fixed point under no_grad, then z = f(z*, x) once: one-step gradient"
ASK = []
MUST = [[HEALTHY_OK, r"fixed[- ]point", r"one[- ]step|1[- ]step", r"equilibrium"]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    r"all[- ]zero",
    r"\bdead\b",
    r"never (move|moved|moves|update|learn)",
    r"not in (the |any )?optimi[sz]er",
]


def step(watch):
    return _step(watch, attach=True)


def truth(run):
    assert run.residual < 1e-5
    for n, p in run.model.named_parameters():
        g = p.grad
        assert g is not None, n
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
        assert not torch.equal(p.detach(), run.before[n]), n
