"""The control of ``poincare_euclidean_sgd_leaves_ball``: the same hierarchy, embeddings and
learning rate, trained as the paper does, by Riemannian SGD: the Euclidean gradient is rescaled by
``(1 - ||theta||^2)^2 / 4`` between the backward and the step (``.grad`` edited in place, by
design), and after the step any point on or outside the boundary is projected back to norm ``1 -
1e-5``.  Every point stays inside the ball (on the second step six of them reach the boundary and
are projected back, as the paper's algorithm does), both steps' losses and gradients are finite, the
loss falls and the embeddings move.

Source:
https://www.groundai.com/project/poincare-embeddings-for-learning-hierarchical-representations/ ("we
introduce a new approach for learning hierarchical representations of symbolic data by embedding
them into hyperbolic space - or more precisely into an n-dimensional Poincare ball"; "We introduce
an efficient algorithm to learn the embeddings based on Riemannian optimization").  Adapted: the
bug's model, data and learning rate with the rescaling and the projection.
"""

import math

import torch
from case_r30_poincare_euclidean_sgd_leaves_ball import step as _step
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = "https://www.groundai.com/project/poincare-embeddings-for-learning-hierarchical-representations/"
DESCRIPTION = (
    "control: Poincare embeddings by Riemannian SGD, grad rescaled, projected: in the ball"
)
ASK = []
MUST = [
    [
        HEALTHY_OK,
        r"(rescal|scal)\w*[^\n]{0,80}(between|before)[^\n]{0,40}step",
        r"riemann\w*|rsgd",
        r"project\w*",
    ]
]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    r"\bdead\b",
    r"not in (the |any )?optimi[sz]er",
    r"never (move|moved|moves|update|learn)",
]


def step(watch):
    return _step(watch, riemannian=True)


def truth(run):
    assert all(math.isfinite(x) for x in run.losses)
    for g in run.grads:
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0)
    for n in run.norms:
        assert bool((n < 1).all())
    assert run.losses[1] < run.losses[0]
