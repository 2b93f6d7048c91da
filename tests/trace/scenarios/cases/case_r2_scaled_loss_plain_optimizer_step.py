"""A GradScaler used only to scale the loss: scaler.scale(loss).backward() and then a plain
optimizer.step(), never scaler.step / unscale_.  The optimizer reads gradients 1024 times too
large (the scaler's scale), and SGD's update is 1024 times the intended one.

Source: https://github.com/nerfstudio-project/nerfacc/issues/307 ("the sample code uses the
GradScaler, but only for scaling the loss and not for the update step ... the gradients are now
1024x larger than they should be"; the maintainer: "Effectively what Im doing here is just
(loss * 1024).backward()").  Reproduced with torch.amp.GradScaler on CPU.
"""

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://github.com/nerfstudio-project/nerfacc/issues/307"
DESCRIPTION = "scaler.scale(loss).backward() then plain opt.step(): grads 1024x too large"
ASK = []
MUST = [
    [r"\b1024\b", r"\b1,024\b", r"2\s*\*\*\s*10", r"2\^10"],
    [r"unscale", r"scaler\.step", r"GradScaler", r"loss scale", r"scaled (loss|gradient)"],
]
MUST_NOT = [FALSE_OK, CLAIMS_NONFINITE]


def _net():
    return nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1))


def step(watch):
    torch.manual_seed(0)
    model = _net()
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    scaler = torch.amp.GradScaler("cpu", init_scale=1024.0)
    x, y = torch.randn(16, 4), torch.randn(16, 1)
    before = [p.detach().clone() for p in model.parameters()]
    with watch(model) as w:
        opt.zero_grad()
        loss = F.mse_loss(model(x), y)
        scaler.scale(loss).backward()
        opt.step()  # the bug: the scaler is never asked to unscale or step
    return Run(w=w, model=model, before=before, x=x, y=y)


def truth(run):
    torch.manual_seed(0)
    ref = _net()
    grads = torch.autograd.grad(F.mse_loss(ref(run.x), run.y), list(ref.parameters()))
    for p, b, g in zip(run.model.parameters(), run.before, grads, strict=True):
        assert torch.allclose(p.grad, 1024 * g, rtol=1e-4, atol=1e-6)
        assert torch.allclose(p.detach(), b - 1e-3 * 1024 * g, rtol=1e-4, atol=1e-6)
