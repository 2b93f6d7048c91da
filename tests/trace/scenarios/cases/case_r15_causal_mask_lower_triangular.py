"""Control: the same tiny language model trained with the causal mask the right way round
(``torch.tril``: each query sees itself and the earlier keys, the later scores set to ``-inf``
before the softmax). No row is fully masked, every gradient is finite and nonzero; after 150 Adam
steps the loss on the 256 training sequences is above half of log 8 (a little memorised) and on
unseen uniformly random sequences above log 8: there is nothing to learn, and nothing to copy. The
logits at position t have exactly zero derivative with respect to every later position's embedding.

Source: https://tracker-7ex.pages.dev/00_ai_foundation/03_transformer_mechanics/10-causal-mask/
("For causal masking: Blocked positions get -inf before softmax ... Lower triangle allowed. Upper
triangle blocked").
"""

import math

import torch
from case_r15_causal_attention_no_mask import LENGTH
from case_r15_causal_attention_no_mask import step as _step
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = "https://tracker-7ex.pages.dev/00_ai_foundation/03_transformer_mechanics/10-causal-mask/"
DESCRIPTION = "control: causal mask with tril (-inf above the diagonal): no future token read"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    r"leak\w*",
    r"future (tokens?|positions?|keys?)",
    r"no gradient",
    r"all-zero",
]


def step(watch):
    return _step(watch, mask="lower")


def truth(run):
    assert run.loss > 0.5 * math.log(8)  # the leaking models are below this
    assert run.fresh > math.log(8)  # unseen random tokens: no better than chance
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
    for t in range(LENGTH):
        assert all(run.reach[t][s] == 0 for s in range(t + 1, LENGTH)), t
        assert run.reach[t][t] > 0, t
