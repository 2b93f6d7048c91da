"""The control of ``grpo_advantage_normalised_over_prompts``: the same GRPO update with each reward
normalised by its own group's mean and standard deviation (``dim=1``, plus 1e-4), as GRPO defines
the advantage.  In every group the advantages sum to zero, the best response gets a positive one and
the worst a negative one, whatever the prompt's difficulty.  Every parameter gets a finite, nonzero
gradient.

Source: https://li-yunhe.com/blog/grpo-algorithm ("For each question q, GRPO samples a group of G
outputs"; "The advantage for each sample is computed by normalizing rewards within the group"; "This
relative normalization is the key: each sample is judged against peers from the same prompt, not by
an external value baseline").  Adapted: the bug's policy, rollouts, rewards and optimizer.
"""

import torch
from case_r31_grpo_advantage_normalised_over_prompts import step as _step
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = "https://li-yunhe.com/blog/grpo-algorithm"
DESCRIPTION = "control: GRPO advantages normalised within each prompt's group (dim=1)"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    r"\bdead\b",
    r"all[- ]zero",
    r"wrong (dim\w*|axis)",
    r"not in (the |any )?optimi[sz]er",
]


def step(watch):
    return _step(watch, within_group=True)


def truth(run):
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
    assert float(run.adv.sum(1).abs().max()) < 1e-4
    best = run.adv.gather(1, run.rewards.argmax(1, keepdim=True)).squeeze(1)
    worst = run.adv.gather(1, run.rewards.argmin(1, keepdim=True)).squeeze(1)
    assert bool((best > 0).all()) and bool((worst < 0).all())
