"""Control: the same classifier and labels, the ``(32, 1)`` column squeezed to ``(32,)`` before
``nn.CrossEntropyLoss``, as the answer's correct usage (``target = torch.randint(0, 5, (3,))``).
The loss is finite, every gradient finite and nonzero, every parameter moves.

Source: https://taourl.com/read-2244767.html ("Correct usage: same rank"; "target =
torch.randint(0, 5, (3,)) # ground truth labels (batch_size=3)"; "loss = loss_fn(output, target)
# works").  Adapted as the bug.
"""

import torch
from case_r20_ce_target_column_raises import step as _step
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = "https://taourl.com/read-2244767.html"
DESCRIPTION = "control: class targets squeezed to (N,) before CrossEntropyLoss: trains"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [CLAIMS_NONFINITE, CLAIMS_ERROR, r"multi-?target", r"all[- ]zero"]


def step(watch):
    return _step(watch, squeeze=True)


def truth(run):
    assert run.target.shape == (32,)
    assert run.error is None and bool(torch.isfinite(run.loss))
    for p, b in zip(run.model.parameters(), run.before, strict=True):
        assert bool(torch.isfinite(p.grad).all()) and bool(p.grad.abs().sum() > 0)
        assert not torch.equal(p.detach(), b)
