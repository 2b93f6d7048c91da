"""The control of ``sophia_hutchinson_negative_curvature``: the same Sophia-H step with the
denominator floored as the method writes it, ``max(rho * h, eps)``.  Where the Hutchinson estimate
is negative the floor makes the ratio large, the clip bounds it at 1, and the coordinate moves
downhill by ``lr``, a sign step; elsewhere the step is the curvature-scaled one.  Every coordinate
moves against its gradient; the gradients are finite and nonzero.  The gradient taken by
``autograd.grad`` with ``create_graph=True``, the Hessian-vector product and the gradient assigned
to ``.grad`` by hand are part of the method.

Source: https://aiwiki.ai/wiki/sophia_optimizer ("The method combines a cheap stochastic estimate of
the diagonal of the Hessian as a per-coordinate pre-conditioner with element-wise clipping that
bounds the worst-case update size, and updates the Hessian estimate only every handful of steps";
"Sophia-H, which uses a Hutchinson-style stochastic trace estimator based on Hessian-vector
products, and Sophia-G, which uses a Gauss-Newton-Bartlett (GNB) estimator that resamples labels
from the model's own output distribution and is guaranteed to be positive semi-definite").  Adapted:
the bug's model, data and Hessian estimate with the floor.
"""

import torch
from case_r30_sophia_hutchinson_negative_curvature import step as _step
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = "https://aiwiki.ai/wiki/sophia_optimizer"
DESCRIPTION = "control: Sophia-H step m / max(rho h, eps), clipped: every coordinate downhill"
ASK = []
MUST = [
    [
        HEALTHY_OK,
        r"create_graph|hessian[- ]vector|second[- ]order|higher[- ]order",
        r"autograd\.grad|assigned (to )?\.?grad|\.grad (was )?(set|assigned)",
    ]
]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    r"\bdead\b",
    r"all[- ]zero",
    r"uphill|ascen\w*",
    r"not in (the |any )?optimi[sz]er",
]


def step(watch):
    return _step(watch, floor=True)


def truth(run):
    negative = 0
    for g, h, d in zip(run.grads, run.hess, run.moves, strict=True):
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0)
        negative += int((h < 0).sum())
        assert bool(((d * g) > 0).sum() == 0)  # nothing moved along its gradient
        assert bool(d[g != 0].abs().min() > 0)
    assert negative > 100
