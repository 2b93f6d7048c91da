"""The control of ``dcn_cross_scalar_broadcast_over_batch``: the same Deep & Cross Network with the
cross layer's scalar kept per example, ``x0 * (xl @ self.w).unsqueeze(-1) + b + xl``.  Each
prediction depends on its own example only (changing example 3's fields moves no other logit);
every gradient is finite and nonzero.  Nothing is wrong.

Source: https://www.tensorflow.org/recommenders/examples/dcn ("DCN was designed to learn explicit
and bounded-degree cross features more effectively. It starts with an input layer (typically an
embedding layer), followed by a cross network containing multiple cross layers that models explicit
feature interactions, and then combines with a deep network that models implicit feature
interactions").  Adapted: the bug's network, data and optimizer with the scalar unsqueezed.
"""

import torch
from case_r33_dcn_cross_scalar_broadcast_over_batch import step as _step
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = "https://www.tensorflow.org/recommenders/examples/dcn"
DESCRIPTION = "control: DCN cross layer with the per-example scalar unsqueezed to (B, 1)"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [CLAIMS_NONFINITE, CLAIMS_ERROR, r"\bdead\b", r"broadcast\w*[^\n]{0,40}(batch|wrong)"]


def step(watch):
    return _step(watch, keepdim=True)


def truth(run):
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
    assert float(run.moved[3]) > 0
    assert float(run.moved[[i for i in range(16) if i != 3]].max()) == 0.0
