"""Control: the same two-head regressor trained with the weighted sum at ``lambda_a = lambda_b =
0.5``.  Both task losses contribute: each head gets its own task's gradient (scaled by 0.5), the
shared trunk gets the sum of both tasks' gradients; every gradient is finite and nonzero and every
parameter moves.

Source: https://brain.tamnd.com/write/book/dl-pytorch/02/08/6.md ("A simple multi-task objective
is a weighted sum"; "loss = ( lambda_cls * classification_loss + lambda_reg * regression_loss ...
)"; "The final scalar loss is backpropagated through all model components that contributed to
it").  Adapted: the bug's two-head model and data (two regression tasks), both weights 0.5.
"""

import torch
from case_r20_multitask_alpha_one_head_b_zero import step as _step
from case_r20_multitask_alpha_one_head_b_zero import task_grads
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = "https://brain.tamnd.com/write/book/dl-pytorch/02/08/6.md"
DESCRIPTION = "control: two-head multi-task loss 0.5 L_a + 0.5 L_b: both heads and the trunk train"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [CLAIMS_NONFINITE, CLAIMS_ERROR, r"all[- ]zero", r"\bzero grad\w*", r"\bdead\b"]


def step(watch):
    return _step(watch, alpha=0.5)


def truth(run):
    assert run.alpha == 0.5
    a, b = task_grads(run, "a"), task_grads(run, "b")
    params = dict(run.model.named_parameters())
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
        assert not torch.equal(params[n].detach(), run.start[n]), n
        ga = a[n] if a[n] is not None else torch.zeros_like(g)
        gb = b[n] if b[n] is not None else torch.zeros_like(g)
        assert torch.allclose(g, 0.5 * ga + 0.5 * gb, atol=1e-7), n
