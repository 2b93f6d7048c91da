"""The control of ``batchnorm1d_channels_last_raises``: the same sequence classifier with the
features transposed to ``(N, C, L)`` around ``BatchNorm1d(16)`` (``bn(h.transpose(1, 2))
.transpose(1, 2)``), as in the thread, where ``BatchNorm1d(16)`` follows a ``Conv1d(4, 16, 1)``
whose output is ``(32, 16, 1)``.  The statistics are taken per channel over the batch and the
steps; every gradient is finite and nonzero.

Source: https://discuss.pytorch.org/t/batchnorm1d-output-different-with-my-implementation/51877
(``conv1 = nn.Conv1d(4, 16, 1)``; ``bn1 = nn.BatchNorm1d(16, eps=1e-5, momentum=1)``; "Input to
batch norm: torch.Size([32, 16, 1])"; ``Ex = input.mean(dim=[0, 2], keepdim=True)``).  Adapted:
the bug's model and data, the transpose written around the normalisation.
"""

import torch
from case_r24_batchnorm1d_channels_last_raises import step as _step
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = "https://discuss.pytorch.org/t/batchnorm1d-output-different-with-my-implementation/51877"
DESCRIPTION = "control: BatchNorm1d on (N, C, L) via transpose: statistics per channel, healthy"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [CLAIMS_NONFINITE, CLAIMS_ERROR, r"\bdead\b", r"all[- ]zero", r"running_mean"]


def step(watch):
    return _step(watch, channels_first=True)


def truth(run):
    assert run.error is None
    for n, p in run.model.named_parameters():
        assert bool(torch.isfinite(p.grad).all()) and bool(p.grad.abs().sum() > 0), n
        assert not torch.equal(p.detach(), run.before[n]), n
