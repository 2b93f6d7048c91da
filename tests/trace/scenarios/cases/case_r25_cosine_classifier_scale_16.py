"""The control of ``cosine_classifier_no_scale``: the same cosine classifier with its cosines
multiplied by a scale ``s = 16`` before the softmax, as normalised-softmax classifiers do: the
logits range over ``[-16, 16]``, the lowest reachable cross-entropy is about ``1e-13``, and the
cross-entropy can be driven down.  Every gradient is finite and nonzero.

Source: https://www.paperswithcode.com/method/cosine-normalization ("To bound dot product and
decrease the variance, Cosine Normalization uses cosine similarity ... instead of dot products in
neural networks"; "Cosine normalization bounds the pre-activation between -1 and 1").  Adapted:
the bug's model, data and optimizer; the scale factor is that of the normalised-softmax
classifiers (NormFace, CosFace), which the stored page does not give.
"""

import torch
from case_r25_cosine_classifier_no_scale import floor
from case_r25_cosine_classifier_no_scale import step as _step
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = "https://www.paperswithcode.com/method/cosine-normalization"
DESCRIPTION = "control: cosine classifier with scale s = 16 before the softmax"
ASK = []
MUST = [[HEALTHY_OK, r"cosine", r"\bscale"]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    r"\bdead\b",
    r"all[- ]zero",
    r"bounded",
    r"\[-1, ?1\]",
]


def step(watch):
    return _step(watch, scale=16.0)


def truth(run):
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
    assert float(run.logits.abs().max()) > 1
    assert float(run.logits.abs().max()) <= 16 + 1e-4 and floor(16.0) < 1e-12
