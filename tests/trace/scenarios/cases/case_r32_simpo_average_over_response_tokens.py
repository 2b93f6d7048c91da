"""The control of ``simpo_average_over_padding``: the same SimPO update with each reward the sum of
the response's token log-probabilities over its own tokens divided by its length, ``(logp *
mask).sum(-1) / mask.sum(-1)``, as SimPO defines the length-normalised reward.  The logits at the pad
slots get exactly zero gradient; every parameter gets a finite, nonzero gradient.

Source: https://leeroopedia.com/index.php/Principle:Princeton_nlp_SimPO_Preference_Optimization
("SimPO simplifies this by using the average log probability of the response as the implicit
reward, normalized by sequence length"; "SimPO also introduces a target reward margin (gamma) that
ensures a minimum gap between chosen and rejected rewards").  Adapted: the bug's policy, data and
optimizer with the masked average.
"""

import torch
from case_r32_simpo_average_over_padding import step as _step
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = "https://leeroopedia.com/index.php/Principle:Princeton_nlp_SimPO_Preference_Optimization"
DESCRIPTION = "control: SimPO reward = mean log-prob over the response's own tokens (pads masked)"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    r"\bdead\b",
    r"all[- ]zero",
    r"\bpad\w* (are |is )?(counted|included|not masked)",
    r"not in (the |any )?optimi[sz]er",
]


def step(watch):
    return _step(watch, masked=True)


def truth(run):
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
    assert run.pad_grad == 0.0
    assert run.reward_gap < 1e-5
