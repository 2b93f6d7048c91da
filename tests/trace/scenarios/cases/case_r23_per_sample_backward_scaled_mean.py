"""The control of ``mean_loss_backward_scaled_by_batch_again``: the loop of the source, one
backward per example, each example's squared error back-propagated with the gradient argument
``1 / n``.  The 64 backward calls accumulate into ``.grad`` (``zero_grad`` once, before the
loop), and their sum is exactly the batch-mean gradient: the step has the size the learning rate
was chosen for.  Every gradient is finite and nonzero.

Source: https://stats.stackexchange.com/questions/183840/sum-or-average-of-gradients-in-mini-batch-gradient-decent
("When I implemented mini batch gradient decent, I just averaged the gradients of all examples in
the training batch"; "Does one typically divide the summed gradients of a batch by the batch
size?"; "Average.").  Adapted: the bug's regressor and 64 examples, per-example losses each
back-propagated with ``torch.tensor(1 / 64)``, SGD at 0.1.
"""

import torch
from case_r23_mean_loss_backward_scaled_by_batch_again import step as _step
from scenario_kit import CLAIMS_ERROR, CLAIMS_NO_ZERO_GRAD, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = (
    "https://stats.stackexchange.com/questions/183840/sum-or-average-of-gradients-in-mini-batch-"
    "gradient-decent"
)
DESCRIPTION = "control: 64 per-example backward(1/n) calls accumulate to the batch-mean gradient"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    CLAIMS_NO_ZERO_GRAD,
    r"all[- ]zero",
    r"\bdead\b",
    r"(divided|scaled) (\w+ )?twice",
    r"too small",
]


def step(watch):
    return _step(watch, per_sample=True)


def truth(run):
    for g, ref in zip(run.grads, run.reference, strict=True):
        assert torch.allclose(g, ref, rtol=1e-4, atol=1e-7)
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0)
