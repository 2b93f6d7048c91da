"""Control: the same classifier and batch with the per-sample weights applied to the unreduced
losses: ``nn.CrossEntropyLoss(reduction='none')`` gives one loss per sample, multiplied by its
weight (0.1 to 1.0), then averaged.  The gradient is that of ``mean(w_i * l_i)``: each sample
counts in proportion to its weight.  Every gradient is finite and nonzero.

Source: https://www.codegenes.net/blog/pytorch-sample-weights ("criterion =
nn.CrossEntropyLoss(reduction='none'); losses = criterion(outputs, targets); weighted_losses =
losses * sample_weights; final_loss = weighted_losses.mean()"; "This returns a loss value for each
sample in the batch").
"""

from case_r15_sample_weights_times_mean_loss import run_weighted, same
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = "https://www.codegenes.net/blog/pytorch-sample-weights"
DESCRIPTION = "control: CrossEntropyLoss(reduction='none') * sample weights, then mean"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    r"broadcast\w*",
    r"(already )?(averaged|reduced) (loss|before)",
    r"no gradient",
    r"all-zero",
]


def step(watch):
    return run_weighted(watch, "none")


def truth(run):
    assert len(run.weights) == 10
    assert same(run.grads, run.ref["per_sample"])
    assert not same(run.grads, run.ref["plain"])
