"""Control: the same DQN-style step with the fix of the pull request, ``clamp_(-1, 1)`` in place:
every gradient element the optimizer reads is within [-1, 1].

Source: https://github.com/pytorch/tutorials/pull/30 (the fix: ``param.grad.data.clamp_(-1, 1)``).
"""

from case_r6_grad_clamp_not_inplace import step as _step
from scenario_kit import CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = "https://github.com/pytorch/tutorials/pull/30"
DESCRIPTION = "control: param.grad.data.clamp_(-1, 1) in place: every element read within [-1, 1]"
ASK = []
MUST = [[HEALTHY_OK, r"clamp", r"clip"]]
MUST_NOT = [CLAIMS_NONFINITE, r"discard", r"no effect", r"not in-?place"]


def step(watch):
    return _step(watch, inplace=True)


def truth(run):
    for g in run.read.values():
        assert float(g.abs().max()) <= 1.0
    assert any(float(g.abs().max()) == 1.0 for g in run.read.values())  # the clip acted
