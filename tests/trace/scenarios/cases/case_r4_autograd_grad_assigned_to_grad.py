"""Control: the same gradients from ``torch.autograd.grad``, written into ``.grad`` by hand
(``p.grad = g``) before ``optimizer.step()``: the step reads them and every parameter moves by
-lr * g, exactly as after ``loss.backward()``.

Source: https://pytorch.org/docs/1.10.1/generated/torch.autograd.grad.html ("Computes and
returns the sum of gradients of outputs with respect to the inputs"; "returned (and not
accumulated into .grad)").
"""

import torch
from case_r4_autograd_grad_then_step import step as _step
from scenario_kit import CLAIMS_NO_ZERO_GRAD, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = "https://pytorch.org/docs/1.10.1/generated/torch.autograd.grad.html"
DESCRIPTION = "control: autograd.grad results assigned to .grad, then step: every param moves"
ASK = []
MUST = [
    [
        HEALTHY_OK,
        r"assign",
        r"autograd\.grad",
        r"(set|written|put) (by hand|manually|directly)",
    ]
]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_NO_ZERO_GRAD,
    r"did(n't| not) (move|change)",
    r"no gradient (reached|for)",
    r"skipp",
]


def step(watch):
    return _step(watch, assign=True)


def truth(run):
    assert not any(run.none_at_step)
    for p, b in zip(run.model.parameters(), run.before, strict=True):
        assert p.grad is not None
        assert torch.allclose(p.detach(), b - 0.1 * p.grad)
        assert not torch.equal(p.detach(), b)
