"""Control: the same custom ``LinearFunction`` with the docs' backward: ``grad_output @ weight``
for the input, ``grad_output.T @ x`` for the weight (its shape, ``(16, 8)``) and
``grad_output.sum(0)`` for the bias.  Backward runs, every gradient equals what autograd gives for
the plain ``F.linear`` (to rounding), all finite and nonzero; the step is taken.

Source: https://git.waymay.us/zhongwei/gh-tachyon-beep-skillpacks-plugins-yzmir-pytorch-engineering/raw/commit/52ec22cfac8965cbbd6156131aed5c4b0b893ba3/skills/using-pytorch-engineering/custom-autograd-functions.md
("how to implement forward and backward passes correctly, mandatory numerical verification with
gradcheck").
"""

import torch
from case_r13_custom_linear_weight_grad_transposed import SOURCE as _SOURCE
from case_r13_custom_linear_weight_grad_transposed import step as _step
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = _SOURCE
DESCRIPTION = "control: custom LinearFunction, backward grad.T @ x and grad.sum(0): healthy"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [CLAIMS_NONFINITE, CLAIMS_ERROR, r"invalid gradient", r"all-zero", r"no gradient"]


def step(watch):
    return _step(watch, variant="right")


def truth(run):
    assert run.error is None
    names = ["hidden.weight", "hidden.bias", "out.weight", "out.bias"]
    for n, r in zip(names, run.ref, strict=True):
        gr = run.grads[n]
        assert torch.allclose(gr, r, rtol=1e-5, atol=1e-7), n
        assert bool(torch.isfinite(gr).all()) and bool(gr.abs().sum() > 0), n
    assert run.moved
