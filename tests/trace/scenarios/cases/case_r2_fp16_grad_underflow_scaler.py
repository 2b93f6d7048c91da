"""Control: the same float16 autocast step with a GradScaler (scale 65536): the scaled gradient
is representable in float16, unscale_ divides it back in float32, and the optimizer reads
gradients within 1 % of the float32 ones.

Source: https://hivebook.wiki/wiki/mixed-precision-training-nans-fp16-overflow-bf16-and-loss-scaling
("you scale the loss up before backward (shifting gradients into fp16's representable range),
then unscale before the optimizer step").  Reproduced with CPU autocast to float16.
"""

import torch
from case_r2_fp16_grad_underflow_no_scaler import fp32_grads
from case_r2_fp16_grad_underflow_no_scaler import step as _step
from scenario_kit import CLAIMS_NO_ZERO_GRAD, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = (
    "https://hivebook.wiki/wiki/mixed-precision-training-nans-fp16-overflow-bf16-and-loss-scaling"
)
DESCRIPTION = "control: same fp16 step with GradScaler(65536); gradients match float32"
ASK = []
MUST = [[HEALTHY_OK, r"unscale"]]
MUST_NOT = [
    CLAIMS_NO_ZERO_GRAD,
    CLAIMS_NONFINITE,
    r"all-zero",
    r"\bzero gradient",
    r"underflow",
    r"(step|update) (was )?skipped",
]


def step(watch):
    return _step(watch, scaled=True)


def truth(run):
    assert run.out_dtype == torch.float16
    for g, ref, p, b in zip(
        run.grads, fp32_grads(), run.model.parameters(), run.before, strict=True
    ):
        assert bool((g != 0).all())
        assert torch.allclose(g, ref, rtol=1e-2, atol=1e-3 * float(ref.abs().max()))
        assert not torch.equal(p.detach(), b)
