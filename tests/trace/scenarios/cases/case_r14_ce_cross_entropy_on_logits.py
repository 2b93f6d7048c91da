"""Control: the same overconfident classifier and batch trained with ``F.cross_entropy`` on the
raw logits (log-softmax and negative log-likelihood in one stable operation, no clipping).  The
examples whose target probability is below ``1e-7`` get rows of the logits' gradient of the
largest size (``(softmax - onehot) / 64``, of norm at least ``1 / 64``), every row is nonzero,
the loss is finite and every parameter gradient is finite and nonzero.

Source: https://converter3000.com/blog/skip-softmax-in-pytorch-nn ("PyTorch's
``nn.CrossEntropyLoss`` actually combines the softmax activation and the negative log-likelihood
loss into one neat package ... prevent potential numerical instability issues").
"""

import torch
from case_r14_ce_clamped_probabilities_zero_grad import EPS
from case_r14_ce_clamped_probabilities_zero_grad import step as _step
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = "https://converter3000.com/blog/skip-softmax-in-pytorch-nn"
DESCRIPTION = "control: F.cross_entropy on the logits: the worst examples get the largest grads"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [CLAIMS_NONFINITE, CLAIMS_ERROR, r"clamp\w*", r"no gradient", r"all-zero"]


def step(watch):
    return _step(watch, builtin=True)


def truth(run):
    clipped = run.p_target < EPS
    assert int(clipped.sum()) >= 4
    norms = run.row_grad.norm(dim=-1)
    assert bool((norms > 0).all())
    # (softmax - onehot) / 64: at least 1/64 where the target probability is ~0, the most a row gets
    assert float(norms[clipped].min()) > 0.99 / len(norms)
    for n, gr in run.grads.items():
        assert bool(torch.isfinite(gr).all()) and bool(gr.abs().sum() > 0), n
