"""The control of ``kd_soft_loss_without_t_squared``: the same distillation step with the soft
term multiplied by ``T**2 = 16`` as Hinton et al. prescribe, so that the teacher's soft targets
weigh on the student's gradient as much at temperature 4 as they would at temperature 1.  Every
gradient is finite and nonzero and is the weighted sum of the two terms' gradients.

Source: https://velog.io/@d4r6j/Cross-Entropy-gradient ("Cross-Entropy gradient : (Hard
distillation) with respect to each logit, of the distilled model. If the cumbersome model has
logits which produce soft target probabilities and the transfer training is done at a temperature
of ..."; it cites Hinton et al., arXiv 1503.02531).  Adapted: the bug's teacher, student, data and
optimizer; the ``T**2`` factor is the paper's ("it is important to multiply them by T^2"), which
the stored excerpt does not quote.
"""

from case_r25_kd_soft_loss_without_t_squared import T, check
from case_r25_kd_soft_loss_without_t_squared import step as _step
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = "https://velog.io/@d4r6j/Cross-Entropy-gradient"
DESCRIPTION = "control: KD soft loss at T = 4 multiplied by T**2"
ASK = []
MUST = [[HEALTHY_OK, r"distill\w*", r"temperature"]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    r"\bdead\b",
    r"all[- ]zero",
    r"(missing|without|forgot\w*|no)[^\n]{0,20}T\s?(\*\*\s?2|\^\s?2|²)",
]


def step(watch):
    return _step(watch, t_squared=True)


def truth(run):
    check(run, T**2)
