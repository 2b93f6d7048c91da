"""Control: the same regressor and step with one ``clip_grad_norm_(model.parameters(),
max_norm=0.5)`` over every parameter: the norm is taken over all gradients together and every
gradient is multiplied by the same factor, so the clipped gradient has global norm 0.5 and points
exactly along the raw gradient.  Clipping is active (the raw global norm is above 0.5); every
gradient is finite and nonzero.

Source: https://ai.stackexchange.com/q/31991 (quoting ``torch.nn.utils.clip_grad_norm_``'s
documentation: "The norm is computed over all gradients together as if they were concatenated into
a single vector.  Gradients are modified in-place").
"""

import torch
from case_r14_clip_norm_per_parameter import MAX_NORM, flat
from case_r14_clip_norm_per_parameter import step as _step
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = "https://ai.stackexchange.com/q/31991"
DESCRIPTION = "control: one clip_grad_norm_ over all parameters: global norm 0.5, same direction"
ASK = []
MUST = [
    [
        HEALTHY_OK,
        r"^summary:[^\n]*clip\w*[^\n]{0,80}(all|total|global|whole|every)",
    ]
]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    r"(per|each|every|individual\w*|separate\w*)[- ](parameter|tensor|layer)[^\n]{0,60}clip",
    r"(direction|relative scale)[^\n]{0,60}chang\w*",
    r"no gradient",
    r"all-zero",
]


def step(watch):
    return _step(watch, per_parameter=False)


def truth(run):
    raw, clipped = flat(run.raw), flat(run.clipped)
    assert float(raw.norm()) > MAX_NORM  # clipping is active
    assert abs(float(clipped.norm()) - MAX_NORM) < 1e-4
    assert float(torch.cosine_similarity(raw, clipped, dim=0)) > 0.9999
    for c in run.clipped:
        assert bool(torch.isfinite(c).all()) and bool(c.abs().sum() > 0)
