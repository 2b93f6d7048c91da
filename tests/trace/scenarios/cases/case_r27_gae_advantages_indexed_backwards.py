"""The control of ``gae_advantages_appended_not_reversed``: the same backward GAE recursion writing
each advantage at its own index, ``advantages[t] = last`` (the rollout storage's
``compute_returns`` of rsl_rl), so that ``advantages[t]`` is ``A_t``.  The advantages equal the
closed form ``sum_l (gamma lambda)^l delta_(t+l)``, returns are advantages plus values, and every
parameter of the actor and the critic gets a finite, nonzero gradient.

Source: https://jebeom.notion.site/PPO-26b9088c7d7f80e7885cfc6ebc247ae4 (rsl_rl's
``compute_returns``: ``for step in reversed(range(self.num_transitions_per_env))``, ``advantage =
delta + next_is_not_terminal * gamma * lam * advantage``, ``self.returns[step] = advantage +
self.values[step]``).  Adapted: the bug's rollout, networks and optimizer with the indexed
recursion (no advantage normalisation, as in the bug).
"""

import torch
from case_r27_gae_advantages_appended_not_reversed import gae_indexed
from case_r27_gae_advantages_appended_not_reversed import step as _step
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = "https://jebeom.notion.site/PPO-26b9088c7d7f80e7885cfc6ebc247ae4"
DESCRIPTION = "control: GAE written at its own index in the backward loop, advantages aligned"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    r"all[- ]zero",
    r"\bzero grad\w*",
    r"\bdead\b",
    r"revers\w*",
    r"misalign\w*",
]


def step(watch):
    return _step(watch, gae=gae_indexed)


def truth(run):
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
    assert torch.allclose(run.advantages, run.reference, atol=1e-4)
