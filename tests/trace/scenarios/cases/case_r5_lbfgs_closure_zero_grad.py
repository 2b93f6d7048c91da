"""Control: the same L-BFGS step with ``optimizer.zero_grad()`` at the top of the closure, as the
documentation writes it: each of the 5 evaluations starts from a zero ``.grad``, and the
optimizer reads the gradient at the point it evaluated.

Source: https://runebook.dev/ru/docs/pytorch/generated/torch.optim.lbfgs/torch.optim.LBFGS.step
(the closure "обнуляет градиенты, вычисляет функцию потерь (loss) и возвращает её": it zeroes the
gradients, computes the loss and returns it).
"""

import torch
from case_r5_lbfgs_closure_no_zero_grad import grad_at
from case_r5_lbfgs_closure_no_zero_grad import step as _step
from scenario_kit import CLAIMS_NO_ZERO_GRAD, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = "https://runebook.dev/ru/docs/pytorch/generated/torch.optim.lbfgs/torch.optim.LBFGS.step"
DESCRIPTION = "control: LBFGS closure with zero_grad: .grad is the last evaluation's gradient"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_NO_ZERO_GRAD,
    r"(sums?|holds?)[^\n]{0,30}\b(\d+|several|multiple) (backward )?passes",
]


def step(watch):
    return _step(watch, zero=True)


def truth(run):
    assert len(run.evaluations) == 5
    last = grad_at(run.evaluations[-1], run.x, run.y)
    for have, one in zip(run.final_grad, last, strict=True):
        assert torch.allclose(have, one, atol=1e-6)
        assert bool(have.abs().sum() > 0)
