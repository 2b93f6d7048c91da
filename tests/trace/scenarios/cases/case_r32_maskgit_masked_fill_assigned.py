"""The control of ``maskgit_masked_fill_result_dropped``: the same MaskGIT step with the masked input
assigned, ``inputs = inputs.masked_fill(mask, MASK_ID)``: every masked position reads the ``[MASK]``
embedding, the loss at the masked positions has to be predicted from the visible context, and the
logits at a masked position do not change when the hidden token there changes.  Every parameter,
the ``[MASK]`` embedding row included, gets a finite, nonzero gradient.

Source: https://aiwiki.ai/wiki/maskgit ("MaskGIT uses a bidirectional Transformer trained with a
masked-token-prediction objective and then decodes all tokens in parallel over a small number of
refinement steps. At each step the model predicts every still-masked token at once, keeps only the
predictions it is most confident about, and leaves the rest masked for the next step").  Adapted:
the bug's model, data and optimizer with the masking assigned.
"""

import torch
from case_r32_maskgit_masked_fill_result_dropped import MASK_ID
from case_r32_maskgit_masked_fill_result_dropped import step as _step
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = "https://aiwiki.ai/wiki/maskgit"
DESCRIPTION = "control: MaskGIT with inputs = inputs.masked_fill(mask, MASK_ID)"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    r"\bdead\b",
    r"all[- ]zero",
    r"leak\w*",
    r"not in (the |any )?optimi[sz]er",
]


def step(watch):
    return _step(watch, assigned=True)


def truth(run):
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
    assert torch.equal(run.inputs == MASK_ID, run.mask)
    assert bool(run.grads["embed.weight"][MASK_ID].abs().sum() > 0)
    assert run.moved == 0.0
