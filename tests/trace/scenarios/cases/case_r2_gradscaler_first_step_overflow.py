"""float16 autocast with GradScaler's default scale 65536: the scaled gradient of a loss that is
a plain sum overflows float16 on the way back, the unscaled gradients are inf/NaN, and
scaler.step skips the optimizer's step (the scale is halved for the next iteration).  The user
reported "grad is inf/nan"; this is GradScaler working as designed on an early iteration: the
forward and the loss are finite, nothing moved.

Source: https://github.com/pytorch/pytorch/issues/111739 ("grad is inf/nan when using
torch.amp": c = a @ b under autocast, loss = c.sum(), scaler.scale(loss).backward(),
scaler.unscale_(optimizer) gives tensor([[-inf, nan], ...])).  Reproduced with CPU autocast to
float16.
"""

import torch
from scenario_kit import FALSE_OK, Run
from torch import nn

SOURCE = "https://github.com/pytorch/pytorch/issues/111739"
DESCRIPTION = "fp16 autocast, GradScaler(65536): scaled grads overflow, step skipped (by design)"
ASK = []
MUST = [
    [r"skip", r"did not step", r"no (optimizer )?step", r"not (been )?(stepped|updated)"],
    [r"\binf\b", r"overflow", r"non-?finite", r"\bnan\b"],
]
MUST_NOT = [
    FALSE_OK,
    r"non-?finite loss",
    r"loss (is|was) (nan|inf|non-?finite)",
    r"(input|forward)[^\n]{0,20}(is|was|were|are) (nan|inf|non-?finite)",
]


def step(watch):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 8), nn.Linear(8, 2))
    opt = torch.optim.Adam(model.parameters(), lr=0.1)
    scaler = torch.amp.GradScaler("cpu")  # default init_scale=65536
    x = torch.randn(4, 8)
    before = [p.detach().clone() for p in model.parameters()]
    with watch(model) as w:
        opt.zero_grad()
        with torch.autocast("cpu", dtype=torch.float16):
            loss = model(x).sum()
        scaler.scale(loss).backward()
        scaler.unscale_(opt)
        finite = [bool(torch.isfinite(p.grad).all()) for p in model.parameters()]
        scaler.step(opt)
        scaler.update()
    return Run(w=w, model=model, before=before, loss=loss.detach(), finite=finite, scaler=scaler)


def truth(run):
    assert bool(torch.isfinite(run.loss))
    assert not all(run.finite)  # the unscaled gradients hold inf/NaN
    for p, b in zip(run.model.parameters(), run.before, strict=True):
        assert torch.equal(p.detach(), b)  # the step was skipped
    assert run.scaler.get_scale() == 2.0**15  # and the scale halved
