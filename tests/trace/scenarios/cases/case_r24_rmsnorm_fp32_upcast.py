"""The control of ``rmsnorm_fp16_eps_underflow_nan``: the same half-precision classifier and data,
with the RMSNorm's statistics computed in float32 (``x.float()``, then the result cast back to
float16), as the commit does its squaring.  ``eps = 1e-8`` survives in float32, the zero padding
rows normalise to ``0 / 1e-4 = 0``, the masked pooling drops them, and every gradient is finite;
the embedding's padding row gets a zero gradient, as ``padding_idx`` means.

Source: http://sanqian.synology.me:8418/zhangyiss/mlx/src/commit/a54f06b16fdd1e3d4a22966576221c8eb2a01fbe/python/tests
(a fast RMSNorm's commit log: "Make the squaring in float32 to avoid underflow").  Adapted: the
bug's model with the normalisation's statistics in float32, in PyTorch.
"""

import torch
from case_r24_rmsnorm_fp16_eps_underflow_nan import step as _step
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = (
    "http://sanqian.synology.me:8418/zhangyiss/mlx/src/commit/"
    "a54f06b16fdd1e3d4a22966576221c8eb2a01fbe/python/tests"
)
DESCRIPTION = "control: RMSNorm statistics in float32 in a float16 model: padding rows stay 0"
ASK = []
MUST = [[HEALTHY_OK, r"padding_idx", r"\bpad\w*"]]
MUST_NOT = [CLAIMS_NONFINITE, CLAIMS_ERROR, r"\bdead\b", r"underflow\w*"]


def step(watch):
    return _step(watch, upcast=True)


def truth(run):
    pad = run.tokens == 0
    assert bool(torch.isfinite(run.normed).all()) and bool((run.normed[pad] == 0).all())
    assert bool(torch.isfinite(run.loss))
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
    assert bool((run.grads["embed.weight"][0] == 0).all())  # padding_idx
