"""The control of ``capsule_routing_softmax_over_inputs``, and a healthy step that looks cut: dynamic
routing with the coupling coefficients ``softmax(b, dim=2)`` over the 4 higher-level capsules, so
that each lower capsule's couplings sum to 1, and the predictions ``u_hat`` detached in the first
two routing iterations, as PyTorch implementations do: the coefficients are not parameters and
get no gradient, the routing's inner iterations send none, and ``W`` and the primary layer get
theirs through the last iteration.  Every gradient is finite and nonzero.

Source: https://www.oreilly.com/library/view/tensorflow-machine-learning/9781789132212/42530ffb-bd6d-4d9d-b72b-edef9e313906.xhtml
("it is necessary for the capsule in the lower layer to decide how to send its output to the
higher-level capsules. This is achieved through the novel concept of the dynamic routing
algorithm"; "cijs are non-negative in nature ..."; the excerpt stops there).  Adapted: the bug's
network, data and optimizer; the sum over the higher-level capsules is the paper's (the same
book's packtpub copy: "The sum of the weights of each lower layer capsule i amounts to 1").
"""

import torch
from case_r25_capsule_routing_softmax_over_inputs import IN_CAPS, _gradients
from case_r25_capsule_routing_softmax_over_inputs import step as _step
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = (
    "https://www.oreilly.com/library/view/tensorflow-machine-learning/9781789132212/"
    "42530ffb-bd6d-4d9d-b72b-edef9e313906.xhtml"
)
DESCRIPTION = "control: capsule routing softmax over the outputs, inner iterations detached"
ASK = []
MUST = [[HEALTHY_OK, r"routing", r"capsules?"]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    r"\bdead\b",
    r"all[- ]zero",
    r"^summary: (?!ok\b)[^\n]*detach",
]


def step(watch):
    return _step(watch, routing_dim=2)


def truth(run):
    _gradients(run)
    assert torch.allclose(run.c.sum(2), torch.ones(64, IN_CAPS), atol=1e-5)
