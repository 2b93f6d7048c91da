"""The same tiny language model trained with a causal mask whose triangle is flipped: ``torch.triu``
keeps the upper triangle (each query sees itself and every later key) where the lower one was meant
(itself and every earlier key). The mask is there, the shapes pass, every row keeps its own position
so nothing is non-finite; but each prediction reads the token it predicts and none of the history:
after 150 Adam steps the loss on uniformly random tokens is under half of log 8, on unseen sequences
too, and the logits at the last position depend on its own input only.

Source: https://tracker-7ex.pages.dev/00_ai_foundation/03_transformer_mechanics/10-causal-mask/
("Attempt 2 — wrong mask orientation, so history disappears"; "Now imagine an implementation bug.
You accidentally keep the upper triangle instead"; "One wrong triangle direction and the model
trains on lies").  Adapted as in ``r15_causal_attention_no_mask``.
"""

import math

import torch
from case_r15_causal_attention_no_mask import LENGTH, VOCAB
from case_r15_causal_attention_no_mask import step as _step
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK

SOURCE = "https://tracker-7ex.pages.dev/00_ai_foundation/03_transformer_mechanics/10-causal-mask/"
DESCRIPTION = "causal mask built with triu (upper triangle kept): each query sees only the future"
ASK = []
MUST = [
    [
        r"causal",
        r"future (tokens?|positions?|keys?)",
        r"look[- ]?ahead",
        r"leak\w*",
        r"\bmask\w*",
        r"triu|tril|triangle|orientation|flipped|inverted|reversed",
        r"(attends?|see|sees|read\w*) [^\n]{0,40}(later|next|future)",
    ],
]
MUST_NOT = [
    FALSE_OK,
    CLAIMS_NONFINITE,
    r"dead (units?|relu|neurons?)",
    r"no_grad",
    r"not in (the |any )?optimizer",
]


def step(watch):
    return _step(watch, mask="upper")


def truth(run):
    assert run.loss < 0.5 * math.log(VOCAB)
    assert run.fresh < 0.5 * math.log(VOCAB)  # unseen random sequences: it copies
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
    reach = run.reach
    assert all(reach[2][s] > 0 for s in range(2, LENGTH))  # itself and every later position
    assert all(reach[2][s] == 0 for s in range(2))  # none of its history
    assert all(reach[LENGTH - 1][s] == 0 for s in range(LENGTH - 1))  # the last: itself only
