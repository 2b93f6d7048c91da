"""Control: the same tiny GPT-2 built with ``tie_word_embeddings=False`` (the spelling the reply
gives), everything frozen but ``lm_head.weight``.  The head is a tensor of its own now: the step
trains the head only and the token embedding stays as it was.  A healthy step with frozen
parameters.

Source: https://github.com/huggingface/transformers/issues/31467 ("It's `tie_word_embeddings` not
`tie_word_embedding`" ... "It works").
"""

import torch
from case_r10_gpt2_freeze_all_but_tied_lm_head import step as _step
from scenario_kit import CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = "https://github.com/huggingface/transformers/issues/31467"
DESCRIPTION = (
    "control: GPT-2 with tie_word_embeddings=False, frozen except lm_head: head only trains"
)
ASK = []
MUST = [[HEALTHY_OK, r"frozen"]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    r"lm_head[^\n]*(no gradient|not (held|in)[^\n]*optimizer)",
    r"frozen[^\n]*(still )?moved",
    r"\btied\b",
]


def step(watch):
    return _step(watch, tie=False)


def truth(run):
    m = run.model
    assert m.lm_head.weight is not m.transformer.wte.weight
    assert torch.equal(m.transformer.wte.weight.detach(), run.wte0)
    assert not torch.equal(m.lm_head.weight.detach(), run.head0)
