"""Control: the same network with only the block's ``Linear`` inside the checkpoint and the
``BatchNorm1d`` (and ReLU) outside it: the recomputation in the backward does not touch the
BatchNorm, whose running statistics take one momentum update per step, as without checkpointing,
and the gradients equal the un-checkpointed ones.

Source: https://discuss.pytorch.org/t/checkpoint-with-batchnorm-running-averages/17738 (the same
thread; keeping BatchNorm out of the recomputed segment avoids the second update).
"""

import torch
from case_r7_checkpoint_batchnorm_stats_twice import step as _step
from scenario_kit import CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = "https://discuss.pytorch.org/t/checkpoint-with-batchnorm-running-averages/17738"
DESCRIPTION = "control: BatchNorm outside the checkpointed Linear: running stats updated once"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    r"(updated|counted|stepped) twice",
    r"running[_ ](mean|var|stat)[^\n]{0,60}(twice|again|doubl)",
]


def step(watch):
    return _step(watch, bn_inside=False)


def truth(run):
    bn, ref_bn = run.model.block[1], run.reference.block[1]
    for n, g in run.grads.items():
        assert torch.allclose(g, run.ref_grads[n], atol=1e-6), n
    assert int(bn.num_batches_tracked) == 1 == int(ref_bn.num_batches_tracked)
    assert torch.allclose(bn.running_mean, ref_bn.running_mean)
    assert torch.allclose(bn.running_var, ref_bn.running_var)
