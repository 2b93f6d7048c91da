"""float16 autocast without loss scaling: the loss carries a small weight, and the gradient that
reaches the model's float16 output (about 1e-9 per entry) is below float16's smallest
subnormal, so it flushes to zero; every parameter's gradient is exactly zero and the step does
nothing, while in float32 the same gradients are nonzero.

Source: https://hivebook.wiki/wiki/mixed-precision-training-nans-fp16-overflow-bf16-and-loss-scaling
("training silently stalls because gradients underflow to zero ... Its smallest normal (~6e-5)
means small gradients flush to zero, so the model stops learning"; "Loss scaling (required for
fp16, not bf16)").  Reproduced with CPU autocast to float16.
"""

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = (
    "https://hivebook.wiki/wiki/mixed-precision-training-nans-fp16-overflow-bf16-and-loss-scaling"
)
DESCRIPTION = "fp16 autocast, small loss weight, no scaler: every gradient underflows to 0"
ASK = ["0.weight"]
MUST = [
    [r"\bzero", r"all-zero"],
    [r"float16", r"\bfp16\b", r"\bhalf\b", r"underflow", r"autocast", r"precision"],
]
MUST_NOT = [FALSE_OK, CLAIMS_NONFINITE, r"dead (relu|unit)"]

AUX_WEIGHT = 1e-5


def _net():
    return nn.Sequential(nn.Linear(8, 16), nn.Tanh(), nn.Linear(16, 4))


def _data():
    torch.manual_seed(1)
    return torch.randn(1024, 8), torch.randn(1024, 4)


def step(watch, scaled=False):
    torch.manual_seed(0)
    model = _net()
    x, y = _data()
    opt = torch.optim.SGD(model.parameters(), lr=1.0)
    scaler = torch.amp.GradScaler("cpu", init_scale=2.0**16) if scaled else None
    before = [p.detach().clone() for p in model.parameters()]
    with watch(model) as w:
        opt.zero_grad()
        with torch.autocast("cpu", dtype=torch.float16):
            out = model(x)
        loss = AUX_WEIGHT * F.mse_loss(out.float(), y)
        if scaler is None:
            loss.backward()
            grads = [p.grad.clone() for p in model.parameters()]
            opt.step()
        else:
            scaler.scale(loss).backward()
            scaler.unscale_(opt)
            grads = [p.grad.clone() for p in model.parameters()]
            scaler.step(opt)
            scaler.update()
    return Run(w=w, model=model, before=before, grads=grads, out_dtype=out.dtype)


def fp32_grads():
    torch.manual_seed(0)
    ref = _net()
    x, y = _data()
    return torch.autograd.grad(AUX_WEIGHT * F.mse_loss(ref(x), y), list(ref.parameters()))


def truth(run):
    assert run.out_dtype == torch.float16
    for g, ref, p, b in zip(
        run.grads, fp32_grads(), run.model.parameters(), run.before, strict=True
    ):
        assert bool((ref != 0).all())  # in float32 every entry is nonzero
        assert bool((g == 0).all())  # under float16 every entry flushed to zero
        assert torch.equal(p.detach(), b)
