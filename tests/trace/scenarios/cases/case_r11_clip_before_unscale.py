"""Gradient clipping applied to the scaled gradients of a ``GradScaler`` loop: ``scaler.scale(loss)
.backward()``, then ``clip_grad_norm_(model.parameters(), 1.0)``, then ``scaler.step(optimizer)``.
The gradients are still multiplied by the scale (65536) when clipped, so their norm is far above
1.0 and they are shrunk to norm 1.0; ``scaler.step`` then unscales them, and the optimizer applies
a gradient of total norm 1 / 65536 instead of the true one (norm about 0.84, which a clip at 1.0
would have left alone): the update is about 55 000 times too small.

Source: https://github.com/milesial/Pytorch-UNet/issues/468 ("Gradients are clipped before the
unscaling": "At lines 114-115 in train.py.  I believe 'scaler.unscale_(optimizer)' should be added
before gradient clipping").  The step runs the loop with ``torch.amp.GradScaler("cpu")`` and no
autocast.
"""

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://github.com/milesial/Pytorch-UNet/issues/468"
DESCRIPTION = "clip_grad_norm_(1.0) on scaled grads before scaler.step unscales: update / 55000"
ASK = []
MUST = [
    [r"clip"],
    [
        r"before[^\n]{0,40}unscal",
        r"unscal\w*[^\n]{0,40}(after|later|afterwards)",
        r"(still |while |were |was )scaled",
        r"scaled (gradients?|\.grad)",
        r"not (yet )?unscaled",
        r"65536|6\.55e\+?04|1\.5\d*e-0?5",
    ],
]
MUST_NOT = [FALSE_OK, CLAIMS_NONFINITE, r"skipp"]
LR, MAX_NORM, SCALE = 0.1, 1.0, 2.0**16


def step(watch, unscale_first: bool = False):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(6, 16), nn.Tanh(), nn.Linear(16, 1))
    opt = torch.optim.SGD(model.parameters(), lr=LR)
    scaler = torch.amp.GradScaler("cpu", init_scale=SCALE)
    g = torch.Generator().manual_seed(1)
    x, y = torch.randn(32, 6, generator=g), 0.3 * torch.randn(32, 1, generator=g)
    true = torch.autograd.grad(F.mse_loss(model(x), y), list(model.parameters()))
    before = [p.detach().clone() for p in model.parameters()]
    with watch(model) as w:
        opt.zero_grad()
        loss = F.mse_loss(model(x), y)
        scaler.scale(loss).backward()
        if unscale_first:
            scaler.unscale_(opt)
        torch.nn.utils.clip_grad_norm_(model.parameters(), MAX_NORM)
        scaler.step(opt)
        scaler.update()
    applied = [p.grad.detach().clone() for p in model.parameters()]  # unscaled by scaler.step
    moved = any(
        not torch.equal(p.detach(), b) for p, b in zip(model.parameters(), before, strict=True)
    )
    return Run(w=w, true=true, applied=applied, moved=moved)


def norm(ts):
    return torch.sqrt(sum(t.pow(2).sum() for t in ts)).item()


def truth(run):
    assert run.moved  # scaler.step did step (no inf/NaN)
    assert norm(run.true) < MAX_NORM  # an unscaled clip would not have acted
    assert abs(norm(run.applied) - MAX_NORM / SCALE) < 1e-3 * MAX_NORM / SCALE
