"""Control: the same classifier and batch with the tokenizer's mask converted to PyTorch's
convention, ``key_padding_mask = attention_mask == 0`` (``True`` on the pads): every query attends
to the real tokens of its sequence, the unpadded sequence to all of them; loss and gradients
finite.  The embedding rows of tokens absent from the batch get no gradient, as always.

Source: https://jkschin.com/blog/2024/src-key-padding-mask ("self-attention on the two relevant
tokens is equivalent to self-attention on all ten tokens with the correct src_key_padding_mask").
"""

import torch
from case_r8_mha_hf_mask_as_padding_mask import step as _step
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = "https://jkschin.com/blog/2024/src-key-padding-mask"
DESCRIPTION = "control: key_padding_mask = attention_mask == 0: pads ignored, all finite"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [CLAIMS_NONFINITE, CLAIMS_ERROR, r"fully masked", r"all-zero"]


def step(watch):
    return _step(watch, convert=True)


def truth(run):
    assert not bool(run.kpm[0].any())
    assert bool(torch.isfinite(run.logits).all()) and run.loss == run.loss
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
