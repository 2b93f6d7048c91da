"""Control: the same custom ``autograd.Function`` layer with the backward written out, as the
"Extending PyTorch" note's ``LinearFunction`` does (``grad_output @ w.t()`` and
``x0.t() @ grad_output``, each guarded by ``ctx.needs_input_grad``): the weight gets the gradient
plain autograd gives for ``x @ w`` and trains.

Source: https://github.com/pytorch/pytorch/issues/2536 ("Improving 'Extending Pytorch' note": the
``Linear.backward()`` example with ``ctx.needs_input_grad``).
"""

import torch
from case_r9_function_backward_regrad_none import ExplicitMatmul
from case_r9_function_backward_regrad_none import step as _step
from scenario_kit import CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = "https://github.com/pytorch/pytorch/issues/2536"
DESCRIPTION = "control: custom Function with an explicit backward: w gets autograd's gradient"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [CLAIMS_NONFINITE, r"returned None", r"\bw\b[^\n]{0,40}no gradient"]


def step(watch):
    return _step(watch, fn=ExplicitMatmul)


def truth(run):
    assert run.w_grad is not None
    assert torch.allclose(run.w_grad, run.ref_grad, atol=1e-6)
    assert not torch.equal(run.w0, run.w1)
