"""Control: the same two heads and Adam with ``zero_grad()`` (``set_to_none=True``, the default
since PyTorch 2.0).  On the second batch head_b gets no gradient, its ``.grad`` stays None and
Adam skips it: it stays where the first step left it, as intended for a batch without task B
labels.

Source: https://pytorch.org/docs/master/generated/torch.optim.Optimizer.zero_grad.html
("If the user requests zero_grad(set_to_none=True) followed by a backward pass, .grads are
guaranteed to be None for params that did not receive a gradient"; "in the other it skips the
step altogether").
"""

import torch
from case_r4_zero_grad_keep_zeros_adam_drift import step as _step
from scenario_kit import CLAIMS_NO_ZERO_GRAD, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = "https://pytorch.org/docs/master/generated/torch.optim.Optimizer.zero_grad.html"
DESCRIPTION = "control: zero_grad() to None; head_b unused in step 2 gets None, Adam skips it"
ASK = []
MUST = [[HEALTHY_OK, r"head_b"]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_NO_ZERO_GRAD,
    r"head_b[^\n]{0,80}still (moved|updated|changed)",
    r"head_b[^\n]{0,60}never called",
]


def step(watch):
    return _step(watch, set_to_none=True)


def truth(run):
    assert bool(run.grad_a.abs().sum() > 0)
    assert run.grad_b is None
    assert torch.equal(run.model.head_b.weight.detach(), run.before_b)  # skipped
