"""The control of ``conformer_glu_default_last_dim``: the same Conformer convolution module with the
gate over the channels, ``nn.GLU(dim=1)``, halving the pointwise convolution's 32 channels back to
16 for the depthwise convolution.  The forward runs; the cross-entropy over frames reaches every
parameter with a finite, nonzero gradient, and every parameter moves.  Dropout and the batch norm
run in training mode, as in training.

Source: https://zhs2326.github.io/posts/2026/03/blog-post-1/ ("The precise sequence of the
Convolution Module is: LayerNorm → Pointwise Conv(d_model, 2·d_model) → GLU → Depthwise
Conv(d_model, d_model, kernel=31) → BatchNorm → Swish → Pointwise Conv(d_model, d_model) → Dropout,
with a residual connection around the entire module").  Adapted: the bug's model, data and optimizer
with the gate's dimension given.
"""

import torch
from case_r29_conformer_glu_default_last_dim import step as _step
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = "https://zhs2326.github.io/posts/2026/03/blog-post-1/"
DESCRIPTION = "control: Conformer conv module with nn.GLU(dim=1) over channels: trains"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    r"all[- ]zero",
    r"\bdead\b",
    r"not in (the |any )?optimi[sz]er",
]


def step(watch):
    return _step(watch, glu_dim=1)


def truth(run):
    assert run.error is None
    for n, p in run.model.named_parameters():
        g = run.grads[n]
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
        assert not torch.equal(p.detach(), run.before[n]), n
