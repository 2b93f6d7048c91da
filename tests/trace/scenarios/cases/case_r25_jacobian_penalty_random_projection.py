"""The control of ``jacobian_penalty_ones_on_softmax_zero``: the same classifier with Hoffman et
al.'s Jacobian regulariser, the squared norm of ``J^T v`` for a random unit vector ``v`` per
example, on the logits, scaled by the number of classes (an unbiased estimate of the Frobenius
norm), computed with ``create_graph=True`` so that it is differentiated in the backward.  The
penalty is positive and changes the gradient of every parameter but the last layer's bias (the
input Jacobian does not depend on it); every gradient is finite and nonzero.

Source: https://www.sciencestack.ai/paper/1908.02729 ("This work introduces Jacobian
regularization, a technique that minimizes the Frobenius norm of the input-output Jacobian to
enlarge decision margins"; "It provides an efficient random-projection-based approximation
enabling practical integration into SGD").  Adapted: the bug's network, data and weight, one
projection per example drawn from the data's seeded generator.
"""

import torch
from case_r25_jacobian_penalty_ones_on_softmax_zero import step as _step
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = "https://www.sciencestack.ai/paper/1908.02729"
DESCRIPTION = "control: Jacobian penalty by random projections of the logits, create_graph=True"
ASK = []
MUST = [[HEALTHY_OK, r"jacobian", r"double[- ]backward", r"create_graph", r"second[- ]order"]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    r"\bdead\b",
    r"all[- ]zero",
    r"sums? to (one|1)",
    r"without create_graph|create_graph\s*(=\s*)?False|missing create_graph",
]


def penalty_random_projection(model, x, g):
    x = x.clone().requires_grad_(True)
    logits = model(x)
    v = torch.randn(logits.shape, generator=g)
    v = v / v.norm(dim=1, keepdim=True)
    (jv,) = torch.autograd.grad(logits, x, grad_outputs=v, create_graph=True)
    return logits, logits.shape[1] * jv.pow(2).sum(1).mean()


def step(watch):
    return _step(watch, penalty=penalty_random_projection)


def truth(run):
    assert run.penalty > 1e-4
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
        same = torch.allclose(g, run.wanted[n], rtol=1e-5, atol=1e-8)
        # the input Jacobian does not depend on the last layer's bias: only there it is the CE's
        assert same == (n == "4.bias"), n
