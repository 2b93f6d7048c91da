"""Control: the same single-logit binary classifier with ``pos_weight`` of length 1, the ratio of
negatives to positives (``torch.tensor([6.767 / 1.173])``): the positive examples' loss is
weighted up and the step is ordinary.

Source: https://discuss.pytorch.org/t/weighted-bce-loss-with-logits/150134 (one output, one
``pos_weight`` entry per output; the documentation: "if a dataset contains 100 positive and 300
negative examples of a single class, then pos_weight for the class should be equal to 300/100").
"""

import torch
from case_r7_pos_weight_length_two_raises import step as _step
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = "https://discuss.pytorch.org/t/weighted-bce-loss-with-logits/150134"
DESCRIPTION = "control: pos_weight of length 1 (negatives / positives): an ordinary step"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [CLAIMS_NONFINITE, CLAIMS_ERROR]


def step(watch):
    return _step(watch, pos_weight=(6.7669172932330826 / 1.1734028683181226,))


def truth(run):
    assert run.error is None
    assert 0 < int(run.label.sum()) < 16
    for p, b in zip(run.model.parameters(), run.before, strict=True):
        assert bool(torch.isfinite(p.grad).all()) and bool(p.grad.abs().sum() > 0)
        assert not torch.equal(p.detach(), b)
