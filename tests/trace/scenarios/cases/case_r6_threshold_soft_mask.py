"""Control: the reply's fix, a soft mask ``sigmoid(10 * (threshold - norm))`` and a weighted mean:
the threshold gets a finite, nonzero gradient and moves, as does the layer.

Source: https://discuss.pytorch.org/t/optimize-masking-parameter/204381/1 ("use sigmoid() to
create a 'soft' mask"; "lossB.backward() / threshold.grad / tensor(0.1020)").
"""

import torch
from case_r6_threshold_hard_mask_no_grad import step as _step
from scenario_kit import CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = "https://discuss.pytorch.org/t/optimize-masking-parameter/204381/1"
DESCRIPTION = "control: sigmoid soft mask: threshold gets a nonzero gradient and moves"
ASK = ["threshold"]
MUST = [[HEALTHY_OK]]
MUST_NOT = [CLAIMS_NONFINITE, r"threshold[^\n]{0,60}(None|never|did not|no gradient)"]


def step(watch):
    return _step(watch, soft=True)


def truth(run):
    g = run.model.threshold.grad
    assert g is not None and bool(torch.isfinite(g)) and float(g) != 0.0
    assert not torch.equal(run.model.threshold.detach(), run.before)
    for p in run.model.parameters():
        assert p.grad is not None and bool(p.grad.abs().sum() > 0)
