"""The control of ``diff_attention_mask_on_first_map_only``: the same differential-attention language
model with the causal mask added to both maps' scores, ``A1`` and ``A2``, before their softmaxes.
No position reads a later one (changing the last token moves no earlier logit), and every parameter
gets a finite, nonzero gradient, the four lambda vectors included.

Source: https://braindrip-v2.vercel.app/courses/llm-concepts/01-foundational-architecture/differential-transformer
("The Differential Transformer computes attention as the difference between two separate softmax
attention maps"; "The Differential Transformer splits each head's queries and keys into two halves.
For head dimension, we get and, each of dimension. Two independent attention maps are computed").
Adapted: the bug's model, data and optimizer with both maps masked.
"""

import torch
from case_r32_diff_attention_mask_on_first_map_only import step as _step
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = (
    "https://braindrip-v2.vercel.app/courses/llm-concepts/01-foundational-architecture/"
    "differential-transformer"
)
DESCRIPTION = "control: differential attention with the causal mask on both softmax maps"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    r"\bdead\b",
    r"all[- ]zero",
    r"leak\w*",
    r"future (tokens?|positions?)",
    r"not in (the |any )?optimi[sz]er",
]


def step(watch):
    return _step(watch, both_masked=True)


def truth(run):
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
    assert run.future_weight == 0.0
    assert run.moved == 0.0
