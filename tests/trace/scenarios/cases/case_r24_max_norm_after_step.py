"""The control of ``max_norm_data_edit_before_backward``: the same classifier and max-norm
constraint, applied where it belongs, after ``optimizer.step()`` and under ``torch.no_grad()``
(``model[2].weight.mul_(...)``).  The backward runs on the weights the forward used, so every
gradient is exactly the gradient of the computed loss, and after the step every row of the middle
layer has norm at most 0.5.  Every gradient is finite and nonzero.

Source: https://discuss.pytorch.org/t/set-nn-parameter-during-training/178163/2 ("in case you want
to directly manipulate a trainable parameter (i.e. without calculating the gradients and using an
optimizer), you could use a no_grad context"; ``optimizer.step()``, then ``with torch.no_grad():
model.weight.copy_(...)``; "make sure model is still updated").  Adapted: the bug's model and data,
the edit a max-norm rescale done in place after the step.
"""

import torch
from case_r24_max_norm_data_edit_before_backward import MAX_NORM
from case_r24_max_norm_data_edit_before_backward import step as _step
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = "https://discuss.pytorch.org/t/set-nn-parameter-during-training/178163/2"
DESCRIPTION = "control: max-norm rescale under no_grad after optimizer.step(): true gradients"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    r"\bdead\b",
    r"all[- ]zero",
    r"between (the )?forward and (the )?backward",
]


def step(watch):
    return _step(watch, before_backward=False)


def truth(run):
    assert bool((run.start[2].weight.norm(dim=1) > MAX_NORM).any())
    assert bool((run.model[2].weight.norm(dim=1) <= MAX_NORM + 1e-5).all())
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
        assert torch.allclose(g, run.true[n], atol=1e-6), n
