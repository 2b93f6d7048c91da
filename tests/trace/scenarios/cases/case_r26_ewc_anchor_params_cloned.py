"""The control of ``ewc_anchor_params_not_copied``: the same EWC step with the anchor stored as
copies of the parameters' values after task A (``p.detach().clone()``).  At the first task-B step
the weights still equal the anchor and the penalty is 0; after that step they differ, and at the
second step the penalty is positive and its gradient ``lambda F (p - theta_A*)`` is nonzero.
Every gradient is finite and nonzero.

Source: https://kylrth.com/paper/overcoming-catastrophic-forgetting/ ("train on the first dataset
as normal", "compute the Fisher information matrix", "when training on a second dataset B, use the
following updated loss function"; "F_i is the i-th element on the diagonal of the information
matrix, and theta_A,i* is the i-th model parameter after training on dataset A").  Adapted: the
bug's model, tasks, Fisher and optimizer.
"""

import torch
from case_r26_ewc_anchor_params_not_copied import LAMBDA
from case_r26_ewc_anchor_params_not_copied import step as _step
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = "https://kylrth.com/paper/overcoming-catastrophic-forgetting/"
DESCRIPTION = "control: EWC anchor = detached clones after task A: penalty > 0 at the second step"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [CLAIMS_NONFINITE, CLAIMS_ERROR, r"all[- ]zero", r"\bzero grad\w*", r"\bdead\b"]


def step(watch):
    return _step(watch, copy_anchor=True)


def truth(run):
    for n, p in run.model.named_parameters():
        assert run.anchor[n] is not p and not torch.equal(run.anchor[n], p.detach()), n
    (first, _, _), (second, at, _) = run.iterations
    assert first == 0.0 and second > 0.0
    pull = [(LAMBDA * run.fisher[n] * (at[n] - run.anchor[n])).abs().sum() for n in at]
    assert all(float(v) > 0 for v in pull)  # the penalty's own gradient at the second step
    for _, _, grads in run.iterations:
        for n, g in grads.items():
            assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
