"""Per-sample weights passed as the ``weight`` argument of ``nn.CrossEntropyLoss``: with a batch of
8 and 8 classes the shapes agree and nothing raises, but ``weight`` is one weight per class: sample
i is weighted ``w[target_i]``, the weight of its label's index, not ``w[i]``, and the mean divides
by the sum of those weights. Here the targets are 1, 3, 4, 0, 1, 3, 4, 2 (classes 5 to 7 absent):
sample 8, meant to weigh 0.8, weighs 0.3, and no sample weighs more than 0.5; the gradient is that
of ``sum(w[y_i] l_i) / sum(w[y_i])``, not of ``mean(w_i l_i)``. Every gradient is finite and
nonzero.

Source: https://discuss.pytorch.org/t/how-to-use-the-weight-loss-functions-parameter/58206
("Assume the size of batch is 4, and I set the weight = (w1, w2, w3, w4). Then the value of loss
function: Loss = (loss_sample_1 * w1 + ...) / (w_1 + ...)"; answer: "The weight parameter is usually
with respect to labels, not batch samples !  It will apply the weight depending on the ground truth
label for the given sample").  Adapted: the classifier and weights of
``r15_sample_weights_times_mean_loss``, the first 8 samples, 8 classes.
"""

import torch
from case_r15_sample_weights_times_mean_loss import run_weighted, same
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK

SOURCE = "https://discuss.pytorch.org/t/how-to-use-the-weight-loss-functions-parameter/58206"
DESCRIPTION = "sample weights given as CrossEntropyLoss(weight=...): read as class weights"
ASK = []
MUST = [
    [
        r"class[- ]weights?",
        r"per[- ]class",
        r"(weight|weights)\b[^\n]{0,60}(class|label|target)",
        r"w\[(y|target|label)",
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
    return run_weighted(watch, "class_weight")


def truth(run):
    assert len(run.weights) == 8
    assert len(set(run.target.tolist())) < 8  # some classes repeated, some absent
    assert bool((run.weights[run.target] != run.weights).any())  # w[y_i] is not w_i
    for g in run.grads:
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0)
    assert same(run.grads, run.ref["class_weight"])
    assert not same(run.grads, run.ref["per_sample"])
