"""Control: the same discriminator step with the question's ``x_hat.requires_grad = True``: the
interpolated points are leaves that require grad, ``autograd.grad`` of ``D(x_hat).sum()`` with
``create_graph=True`` gives the critic's input gradient with a graph, and the penalty
``10 * (||grad|| - 1)**2`` is backpropagated with the BCE loss: its second-order gradient reaches
every discriminator weight.  Every gradient is finite and nonzero and the step is taken.

Source: https://programbox.ru/2022/01/09/%d0%b2%d1%8b%d0%b2%d0%be%d0%b4-%d1%83%d1%80%d0%b0%d0%b2%d0%bd%d0%b5%d0%bd%d0%b8%d0%b9-%d0%b4%d0%bb%d1%8f-%d0%be%d0%b1%d1%80%d0%b0%d1%82%d0%bd%d0%be%d0%b3%d0%be-%d1%80%d0%b0%d1%81%d0%bf%d1%80%d0%be
("x_hat.requires_grad = True"; "torch.autograd.grad(outputs=logits, inputs=x_hat, ...,
create_graph=True)"; "Pytorch makes this very easy, since it has autograd").
"""

import torch
from case_r13_gradient_penalty_interpolates_no_requires_grad import SOURCE as _SOURCE
from case_r13_gradient_penalty_interpolates_no_requires_grad import step as _step
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = _SOURCE
DESCRIPTION = "control: x_hat.requires_grad = True, penalty with create_graph: D trains, healthy"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [CLAIMS_NONFINITE, CLAIMS_ERROR, r"all-zero", r"no gradient", r"create_graph"]


def step(watch):
    return _step(watch, set_requires_grad=True)


def truth(run):
    assert run.error is None
    assert run.state["gp_has_graph"]
    for gr in run.grads:
        assert gr is not None and bool(torch.isfinite(gr).all()) and bool(gr.abs().sum() > 0)
    assert any(  # the penalty contributes to the discriminator's gradient
        not torch.allclose(gr, a, rtol=1e-3) for gr, a in zip(run.grads, run.adv_only, strict=True)
    )
    assert run.moved
