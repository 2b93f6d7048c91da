"""Control: the same network wrapped whole in ``checkpoint(self.body, x, use_reentrant=False)``:
the non-reentrant checkpoint's output requires grad as the function's would (the body's
parameters require grad), the backward recomputes the body and every parameter gets a finite,
nonzero gradient; nothing raises, no warning.

Source: https://github.com/pytorch/pytorch/issues/7617 ("In principle ... checkpoint(function,
*args) should behave exactly the same during forwarding as function(*args)", which the
non-reentrant variant does).
"""

from case_r11_checkpoint_reentrant_whole_model import step as _step
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = "https://github.com/pytorch/pytorch/issues/7617"
DESCRIPTION = "control: whole model under checkpoint(use_reentrant=False): every param trains"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_ERROR,
    CLAIMS_NONFINITE,
    r"checkpoint[^\n]{0,80}(no gradient|\bNone\b|cut)",
    r"None of the inputs",
]


def step(watch):
    return _step(watch, reentrant=False)


def truth(run):
    assert run.error is None and run.pred_requires_grad
    assert not any("None of the inputs" in m for m in run.messages)
    assert all(g is not None and bool(g.abs().sum() > 0) for g in run.grads)
