"""Control: bfloat16 autocast with a GradScaler, scaler.scale(loss).backward();
scaler.step(optimizer); scaler.update(), without an explicit scaler.unscale_(optimizer) -- the
user asked whether it is missing.  scaler.step unscales the gradients itself before the
optimizer reads them (a GradScaler is not needed with bfloat16, but it does no harm): the
update is the one of the unscaled gradients.

Source: https://github.com/facebookresearch/ijepa/issues/64 ("Why there is no unscale_ when you
use amp?": "if use_bfloat16: scaler.scale(loss).backward(); scaler.step(optimizer);
scaler.update()" ... "I think it should be ... scaler.unscale_(optimizer) ... Am I right?").
Reproduced with CPU autocast to bfloat16 and torch.amp.GradScaler("cpu").
"""

import torch
from scenario_kit import CLAIMS_NO_ZERO_GRAD, CLAIMS_NONFINITE, HEALTHY_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://github.com/facebookresearch/ijepa/issues/64"
DESCRIPTION = "control: bf16 autocast + GradScaler, scaler.step without explicit unscale_: fine"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_NO_ZERO_GRAD,
    r"(not|never) unscaled",
    r"without (an? )?unscale",
    r"(65536|2\^16|2\*\*16) times (too )?(large|big)",
    r"too large",
    r"skipped",
]


def _net():
    return nn.Sequential(nn.Linear(8, 16), nn.GELU(), nn.Linear(16, 4))


def step(watch):
    torch.manual_seed(0)
    model = _net()
    g = torch.Generator().manual_seed(1)
    x, y = torch.randn(32, 8, generator=g), torch.randint(0, 4, (32,), generator=g)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    scaler = torch.amp.GradScaler("cpu", init_scale=2.0**16)
    before = [p.detach().clone() for p in model.parameters()]
    with watch(model) as w:
        opt.zero_grad()
        with torch.autocast("cpu", dtype=torch.bfloat16):
            loss = F.cross_entropy(model(x), y)
        scaler.scale(loss).backward()
        scaled = [p.grad.clone() for p in model.parameters()]
        scaler.step(opt)
        scaler.update()
    return Run(w=w, model=model, before=before, scaled=scaled, scale=scaler.get_scale())


def truth(run):
    assert run.scale == 2.0**16  # no inf/NaN: the scale stayed
    for p, b, s in zip(run.model.parameters(), run.before, run.scaled, strict=True):
        unscaled = s / 2.0**16
        assert torch.allclose(p.detach(), b - 0.1 * unscaled, rtol=1e-5, atol=1e-7)
        assert torch.allclose(p.grad, unscaled)  # .grad left unscaled by scaler.step
