"""Control: the same two-layer flow with its linear layer started at a random rotation (the ``Q``
of a QR decomposition, ``|det| = 1``, as Glow starts its invertible 1x1 convolutions): ``slogdet``
is finite (0 at the start), the negative log-likelihood is finite and every parameter gets a
finite, nonzero gradient.

Source: https://apxml.com/courses/intro-normalizing-flows/chapter-5-training-flow-models/loss-functions-density-estimation
("This loss function consists of two distinct components that the model must balance during
training.  The first term is the log-probability of the transformed data point under the base
distribution.  The second term is the log-determinant of the Jacobian").
"""

import math

import torch
from case_r12_flow_linear_zero_init_slogdet import step as _step
from scenario_kit import CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = (
    "https://apxml.com/courses/intro-normalizing-flows/"
    "chapter-5-training-flow-models/loss-functions-density-estimation"
)
DESCRIPTION = "control: linear flow layer started at a random rotation: finite NLL, trains"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [CLAIMS_NONFINITE, r"singular", r"all-zero", r"no gradient"]


def step(watch):
    return _step(watch, init="rotation")


def truth(run):
    assert math.isfinite(run.loss) and math.isfinite(run.logabsdet)
    for n, gr in run.grads.items():
        assert bool(torch.isfinite(gr).all()) and bool(gr.abs().sum() > 0), n
    for n, p in run.params.items():
        assert bool(torch.isfinite(p).all()), n
