"""The control of ``retnet_decay_abs_distance``: the same RetNet-style language model with the decay
matrix as RetNet defines it, ``D[n, m] = gamma ** (n - m)`` for ``n >= m`` and 0 for ``n < m``, so
that position ``n`` reads only itself and the positions before it (the outputs before the last
position are bit for bit unchanged when only the last token is changed).  Every parameter gets a
finite, nonzero gradient.

Source: https://www.emergentmind.com/topics/retentive-network-retnet ("RetNet is a neural sequence
modeling architecture that replaces softmax-based self-attention with a retention operator based on
causal exponential decay"; "Define the causal decay matrix"; "No softmax normalization is used;
instead, the decay matrix enforces a prior of exponentially diminishing memory into the past";
"outputs are concatenated, normalized with GroupNorm, and fused by a swish-gated gating mechanism
before a final linear projection").  Adapted: the bug's model, data and optimizer with this decay.
"""

import torch
from case_r31_retnet_decay_abs_distance import step as _step
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = "https://www.emergentmind.com/topics/retentive-network-retnet"
DESCRIPTION = "control: RetNet causal decay gamma ** (n - m) for n >= m, 0 above the diagonal"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    r"\bdead\b",
    r"all[- ]zero",
    r"(leak\w*|look\w* ahead|future (tokens?|positions?))",
    r"not in (the |any )?optimi[sz]er",
]


def step(watch):
    return _step(watch, causal=True)


def truth(run):
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
    assert run.shift == 0.0
