"""Control: the same block checkpointed with the default ``preserve_rng_state=True``: the
recomputation restores the RNG state, draws the forward's dropout mask again, and every gradient
equals the one of the same step without checkpointing.

Source: https://github.com/lucidrains/enformer-pytorch/issues/33 ("Is it safe to use it like this
since there are many non-zero dropout layers"; answer: "they preserve the RNG states unless you
turn it off").
"""

import torch
from case_r9_checkpoint_dropout_rng_not_preserved import step as _step
from scenario_kit import CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = "https://github.com/lucidrains/enformer-pytorch/issues/33"
DESCRIPTION = "control: checkpoint with preserve_rng_state=True around dropout: exact gradients"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [CLAIMS_NONFINITE, r"preserve_rng_state", r"different (dropout )?mask", r"all-zero"]


def step(watch):
    return _step(watch, preserve=True)


def truth(run):
    assert run.loss == run.ref_loss
    for n, g in run.grads.items():
        assert torch.allclose(g, run.ref[n], atol=1e-6), n
