"""The control of ``svdd_center_learnable``: the same bias-free Deep SVDD network with the centre
``c`` computed once from the initial forward pass and registered as a buffer, fixed: only the
network's weights are optimised, ``c`` has no gradient and does not move, and every weight gets a
finite, nonzero gradient.

Source: https://aicodeinvest.com/deep-svdd-one-class-anomaly-detection-python-guide/ ("It trains a
neural network to map all normal data points into a tight hypersphere in a learned latent space.
Anything that lands far from the center of that sphere is flagged as anomalous").  Adapted: the
bug's network, data and optimizer; the fixed centre and the bias-free layers are the method's
(the same site's summary: "The encoder essential no bias terms and no bounded activations in the
final layer"; "center initialization from the pretrained features").
"""

import torch
from case_r25_svdd_center_learnable import step as _step
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = "https://aicodeinvest.com/deep-svdd-one-class-anomaly-detection-python-guide/"
DESCRIPTION = "control: Deep SVDD centre c a fixed buffer, bias-free network"
ASK = []
MUST = [[HEALTHY_OK, r"SVDD", r"hypersphere", r"cent(er|re)"]]
MUST_NOT = [CLAIMS_NONFINITE, CLAIMS_ERROR, r"\bdead\b", r"all[- ]zero", r"collaps\w*"]


def step(watch):
    return _step(watch, learnable_center=False)


def truth(run):
    assert "c" not in [n for n, _ in run.model.named_parameters()]
    assert torch.equal(run.model.c, run.c0)
    for grads in run.grads:
        for n, g in grads.items():
            assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
