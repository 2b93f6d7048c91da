"""Control: the same distillation step with ``F.kl_div(F.log_softmax(student / T), softmax(teacher
/ T), reduction="batchmean")``: the input is log-probabilities as documented, the term equals the
KL divergence of the softened distributions (non-negative), scaled by ``T**2``, plus the hard-label
cross-entropy; the teacher runs under ``no_grad`` and is not watched nor optimised.

Source: https://docs.pytorch.org/docs/1.10/generated/torch.nn.functional.kl_div.html ("input -
Tensor of arbitrary shape in log-probabilities"; "'batchmean': the sum of the output will be
divided by the batchsize").
"""

from case_r11_kd_kl_div_probs_input import step as _step
from scenario_kit import CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = "https://docs.pytorch.org/docs/1.10/generated/torch.nn.functional.kl_div.html"
DESCRIPTION = "control: KD with F.kl_div(log_softmax(s/T), softmax(t/T), 'batchmean') * T**2"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    r"not (a |in )?log-?probabilit",
    r"negative (loss|KL|divergence)",
]


def step(watch):
    return _step(watch, log_input=True)


def truth(run):
    assert run.kd >= 0 and abs(run.kd - run.true_kl) < 1e-5
    assert all(g is not None and bool(g.abs().sum() > 0) for g in run.grads)
