"""The control of ``pointnet_feature_transform_reg_sqrt_at_identity``, a healthy step that looks odd
on its first iteration: the same PointNet, T-Net initialisation (the transform exactly the identity)
and data, with the regularizer as the paper writes it, the squared Frobenius norm ``sum((A A^T -
I)^2)``.  Its gradient at the identity is exactly zero, and every gradient is finite.  On the first
step the T-Net's hidden layers get exactly zero gradient (the last layer's weights are zero, so
nothing reaches them) while its last layer learns; on the second step, with the transform moved away
from the identity, every parameter gets a gradient.  Two steps are watched; nothing is wrong.

Source: http://ceurspt.wikidata.dbis.rwth-aachen.de/Vol-2568/paper8.cermine ("PointNet is a neural
network architecture capable of processing such unordered point sets directly"; "we introduce a
feature-based alternative to spatial transformer, which is a sub-network of PointNet responsible for
aligning misaligned objects into canonical orientation").  Adapted: the bug's model, data and
optimizer with the squared norm (the page's spin-image features are not used).
"""

import math

import torch
from case_r30_pointnet_feature_transform_reg_sqrt_at_identity import K, reg_squared
from case_r30_pointnet_feature_transform_reg_sqrt_at_identity import step as _step
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = "http://ceurspt.wikidata.dbis.rwth-aachen.de/Vol-2568/paper8.cermine"
DESCRIPTION = (
    "healthy: PointNet T-Net at identity, squared Frobenius reg: T-Net hidden zero on step 1"
)
ASK = []
MUST = [
    [
        HEALTHY_OK,
        r"zero[- ]init\w*",
        r"identity",
        r"first step",
        r"tnet|t-net|transform",
    ]
]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    r"\bdead\b",
    r"requires_grad\s*(=|is|was)?\s*False",
    r"not in (the |any )?optimi[sz]er",
    r"never (move|moved|moves|update|learn)",
]


def step(watch):
    return _step(watch, reg=reg_squared)


def truth(run):
    assert torch.equal(run.transforms[0], torch.eye(K).expand(16, K, K))
    assert all(math.isfinite(x) for x in run.losses)
    hidden = ("tnet_conv", "tnet_fc.0")
    for n, g in run.grads[0].items():
        assert bool(torch.isfinite(g).all()), n
        assert bool(g.abs().sum() == 0) == n.startswith(hidden), n
    for n, g in run.grads[1].items():
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
