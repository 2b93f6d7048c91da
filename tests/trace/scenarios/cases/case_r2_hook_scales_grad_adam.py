"""Control: a hook multiplies the weight's gradient by 10 before Adam's step.  The user expected
a ten times larger update and saw none; Adam's first step is lr * sign(grad) whatever the
gradient's scale, so the update is the same.  Nothing is wrong with the step.

Source: https://github.com/pytorch/pytorch/issues/2843 ("register_hook-modified gradient cannot
be applied to optimizer": "although I can modified the gradient at will, the optimizer always
updates ... after one backward step, a decreases from 2 to 1.9900" with a hook of x10 or x10000;
the reply: a.grad is 80, "which is correct").
"""

import torch
from scenario_kit import CLAIMS_NO_ZERO_GRAD, CLAIMS_NONFINITE, HEALTHY_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://github.com/pytorch/pytorch/issues/2843"
DESCRIPTION = "control: hook x10 on a weight, Adam; .grad is 10x, the update is unchanged"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NO_ZERO_GRAD,
    CLAIMS_NONFINITE,
    r"explod",
    r"(scaled|rescaled|multiplied|changed) between the backward and the (optimizer )?step",
]


def _net():
    return nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 2))


def step(watch):
    torch.manual_seed(0)
    model = _net()
    model[0].weight.register_hook(lambda g: g * 10)
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    x, y = torch.rand(8, 3), torch.rand(8, 2)
    before = [p.detach().clone() for p in model.parameters()]
    with watch(model) as w:
        opt.zero_grad()
        loss = F.mse_loss(model(x), y)
        loss.backward()
        grads = [p.grad.clone() for p in model.parameters()]
        opt.step()
    return Run(w=w, model=model, before=before, grads=grads, x=x, y=y)


def truth(run):
    torch.manual_seed(0)
    ref = _net()
    plain = torch.autograd.grad(F.mse_loss(ref(run.x), run.y), list(ref.parameters()))
    assert torch.allclose(run.grads[0], 10 * plain[0], rtol=1e-5, atol=1e-8)
    for g in run.grads:
        assert bool((g != 0).any()) and bool(torch.isfinite(g).all())
    # Adam's first update, lr * m / (sqrt(v) + eps), is lr * sign(g) for the hooked weight too
    moved = run.model[0].weight.detach() - run.before[0]
    nonzero = plain[0] != 0
    assert torch.allclose(moved[nonzero], -1e-2 * plain[0].sign()[nonzero], rtol=1e-3)
