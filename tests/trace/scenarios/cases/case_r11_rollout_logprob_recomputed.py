"""Control: the same actor-critic, rollout under ``torch.no_grad()`` as before, but the update
recomputes the log-probabilities of the stored actions with the current policy
(``Categorical(logits=actor(states)).log_prob(actions)``): the policy term has its graph, and
actor and critic both get finite, nonzero gradients and move.

Source: https://whitmem.kr/read/425 (the log-probability from ``Categorical.log_prob`` is
connected to the graph and so usable as the loss, "-를 붙이고 보상 점수를 곱하면 된다": negate it
and multiply by the reward).
"""

from case_r11_rollout_logprob_no_grad import step as _step
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = "https://whitmem.kr/read/425"
DESCRIPTION = "control: log_prob recomputed at the update from the stored actions: actor trains"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    r"actor\.\d[^\n]{0,80}(no gradient|\bNone\b|never (ran|moved))",
]


def step(watch):
    return _step(watch, recompute=True)


def truth(run):
    for n, g in run.grads.items():
        assert g is not None and bool(g.abs().sum() > 0) and run.moved[n], n
