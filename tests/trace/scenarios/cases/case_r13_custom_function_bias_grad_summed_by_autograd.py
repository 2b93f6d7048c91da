"""A healthy step its author suspected: the same custom ``LinearFunction`` whose ``backward``
returns the bias gradient as ``grad_output`` itself, of shape ``(32, 16)`` for a bias of shape
``(16,)``, without the sum over the batch.  It looks like the shape pitfall, but autograd checks a
Function's returned gradients and, when the input's shape can be broadcast to the returned one,
sums the gradient back to the input's shape (``sum_to``): ``hidden.bias.grad`` is exactly
``grad_output.sum(0)``, the same as autograd's own gradient for ``F.linear``.  Nothing raises,
every gradient is right, finite and nonzero; the step is an ordinary one.

Source: https://git.waymay.us/zhongwei/gh-tachyon-beep-skillpacks-plugins-yzmir-pytorch-engineering/raw/commit/52ec22cfac8965cbbd6156131aed5c4b0b893ba3/skills/using-pytorch-engineering/custom-autograd-functions.md
("common pitfalls that break gradient computation"; "mandatory numerical verification with
gradcheck").  Adapted: the suspected pitfall is the unreduced bias gradient.
"""

import torch
from case_r13_custom_linear_weight_grad_transposed import SOURCE as _SOURCE
from case_r13_custom_linear_weight_grad_transposed import step as _step
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = _SOURCE
DESCRIPTION = "healthy: custom Function returns (32, 16) bias grad; autograd sums it to (16,)"
ASK = ["hidden.bias"]
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    r"invalid gradient",
    r"wrong shape",
    r"(bias|gradient)[^\n]{0,40}(is |was )?wrong",
    r"all-zero",
    r"no gradient",
]


def step(watch):
    return _step(watch, variant="unreduced")


def truth(run):
    assert run.error is None
    names = ["hidden.weight", "hidden.bias", "out.weight", "out.bias"]
    for n, r in zip(names, run.ref, strict=True):
        gr = run.grads[n]
        assert gr.shape == r.shape
        assert torch.allclose(gr, r, rtol=1e-5, atol=1e-7), n
        assert bool(torch.isfinite(gr).all()) and bool(gr.abs().sum() > 0), n
    assert run.moved
