"""Control: the same one-layer self-attention regressor with its scores divided by ``sqrt(d_k)``
(``d_k = 512``), as scaled dot-product attention does: a score has a standard deviation of about 1,
the softmax spreads its weight over several keys (no row above 0.9), and every row's scores get
a gradient (none below a thousandth of the largest row's).  Every gradient is finite and nonzero.

Source: https://www.cruxible.dev/learn/ml56-scaled-dot-product ("Before softmax, each score is
divided by the square root of the key dimension ... Divide by the square root to keep score
variance near one.  Softmax then produces a smoother, trainable distribution").
"""

import torch
from case_r14_attention_unscaled_scores_saturate import step as _step
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = "https://www.cruxible.dev/learn/ml56-scaled-dot-product"
DESCRIPTION = "control: attention scores divided by sqrt(d_k): softmax spread, q/k train, healthy"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    r"saturat\w*",
    r"vanish\w*",
    r"all-zero",
    r"no gradient",
]


def step(watch):
    return _step(watch, scaled=True)


def truth(run):
    assert float(run.top.max()) < 0.9
    for n, gr in run.grads.items():
        assert bool(torch.isfinite(gr).all()) and bool(gr.abs().sum() > 0), n
    rows = run.row_grad.flatten()
    assert bool((rows > 1e-3 * rows.max()).all())
