"""Control: the same validation pass and first training step with the validation loss computed
under ``torch.no_grad()`` and never back-propagated, the fix the issue's reply verified
(``model.eval()`` and ``with torch.no_grad():`` around the validation run).  ``.grad`` is empty when
the training batch runs its backward; the SGD update is exactly ``-lr * g_train``.  Every gradient
is finite and nonzero.

Source: https://github.com/harvardnlp/annotated-transformer/issues/14 ("The recommended way to run
validation is: model.eval() torch.no_grad()"; "the code that runs without error is the
following: model.eval() with torch.no_grad(): test_loss = run_epoch(...)").
"""

import torch
from case_r14_validation_backward_leaks_into_train import LR
from case_r14_validation_backward_leaks_into_train import step as _step
from scenario_kit import CLAIMS_ERROR, CLAIMS_NO_ZERO_GRAD, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = "https://github.com/harvardnlp/annotated-transformer/issues/14"
DESCRIPTION = "control: validation under no_grad, no backward: the train step uses g_train only"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    CLAIMS_NO_ZERO_GRAD,
    r"accumulat\w*",
    r"sum of (2|two)",
    r"no gradient",
]


def step(watch):
    return _step(watch, validate_under_no_grad=True)


def truth(run):
    for d, gt in zip(run.deltas, run.g_train, strict=True):
        assert bool(gt.abs().sum() > 0)
        assert torch.allclose(d, -LR * gt, atol=1e-6)
