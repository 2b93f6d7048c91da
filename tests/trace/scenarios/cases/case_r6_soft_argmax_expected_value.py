"""Control: the same two branches, the returned value the classifier's probabilities times the
regression outputs, summed (an expectation instead of an index): every layer, the classifier's
included, gets a finite, nonzero gradient.

Source: https://ai.stackexchange.com/questions/41264/how-to-do-backpropagation-with-argmax (the
soft-argmax strategy the question cites, used as weights instead of rounded to an index).
"""

import torch
from case_r6_soft_argmax_round_gather import step as _step
from scenario_kit import CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = "https://ai.stackexchange.com/questions/41264/how-to-do-backpropagation-with-argmax"
DESCRIPTION = "control: sum(softmax * regression) instead of a rounded index: all layers train"
ASK = ["classifier_fc1.weight"]
MUST = [[HEALTHY_OK]]
MUST_NOT = [CLAIMS_NONFINITE, r"classifier_fc1[^\n]{0,60}(None|never|did not|no gradient)"]


def step(watch):
    return _step(watch, soft=True)


def truth(run):
    for name, p in run.model.named_parameters():
        assert p.grad is not None and bool(torch.isfinite(p.grad).all()), name
        assert bool(p.grad.abs().sum() > 0), name
