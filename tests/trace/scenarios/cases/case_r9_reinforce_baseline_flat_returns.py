"""Control: the same REINFORCE step with the returns kept flat, shape ``(T,)`` like the
log-probabilities: ``log_probs * advantages`` is elementwise, the mean baseline only reduces
variance, and the policy gets the gradient of ``-sum_t log_prob_t * (G_t - mean G)``.

Source: https://ai.stackexchange.com/questions/41279/reinforce-with-baseline-not-learning (the
answer's fix: the returns must have the shape of the log-probabilities).
"""

from case_r9_reinforce_baseline_broadcast import T
from case_r9_reinforce_baseline_broadcast import step as _step
from scenario_kit import CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = "https://ai.stackexchange.com/questions/41279/reinforce-with-baseline-not-learning"
DESCRIPTION = "control: REINFORCE, returns flat (T,), mean baseline: the intended policy gradient"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [CLAIMS_NONFINITE, r"broadcast", r"all-zero", r"vanish"]


def step(watch):
    return _step(watch, flat=True)


def truth(run):
    assert run.shape == (T,)
    assert abs(run.norm - run.right_norm) <= 1e-4 * run.right_norm
