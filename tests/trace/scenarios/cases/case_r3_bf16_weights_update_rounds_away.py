"""The whole model cast to bfloat16 (model.to(torch.bfloat16)) and trained with a plain
optimizer: every gradient is finite and nonzero, but bfloat16 keeps 8 bits of mantissa, so an
update lr * grad below half the spacing of the weight it is added to rounds back to the same
number.  After the step almost every entry of the first layer is bit for bit what it was.

Source: https://github.com/pytorch/pytorch/issues/120376 ("Stochastic rounding in bfloat16":
"model = model.to(dtype=torch.bfloat16)" with an optimizer that rounds to nearest loses the
small updates; with stochastic rounding "the new bfloat16 AdamW ... performs the same as
float32 training"; the thread compares it with "fp32 master weights + bf16").
"""

import torch
from scenario_kit import FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://github.com/pytorch/pytorch/issues/120376"
DESCRIPTION = "model.to(bfloat16), SGD lr 1e-3: finite nonzero grads, 97 % of 0.weight unchanged"
ASK = []
MUST = [
    [r"bfloat16", r"\bbf16\b", r"resolution", r"precision", r"spacing", r"round"],
    [
        r"did(n't| not) (move|change)",
        r"unchanged",
        r"not (moved|changed|updated)",
        r"no (visible )?(effect|change)",
        r"round(ed|s|ing)? (away|off|back)",
        r"\blost\b",
    ],
]
MUST_NOT = [FALSE_OK]


def _net():
    return nn.Sequential(nn.Linear(16, 32), nn.Tanh(), nn.Linear(32, 1))


def _data():
    g = torch.Generator().manual_seed(1)
    return torch.randn(64, 16, generator=g), torch.randn(64, 1, generator=g)


def step(watch, bf16_weights=True):
    torch.manual_seed(0)
    model = _net()
    if bf16_weights:
        model = model.to(torch.bfloat16)
    x, y = _data()
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    before = [p.detach().clone() for p in model.parameters()]
    with watch(model) as w:
        opt.zero_grad()
        if bf16_weights:
            loss = F.mse_loss(model(x.to(torch.bfloat16)).float(), y)
        else:  # bfloat16 autocast on float32 weights
            with torch.autocast("cpu", dtype=torch.bfloat16):
                out = model(x)
            loss = F.mse_loss(out.float(), y)
        loss.backward()
        grads = [p.grad.clone() for p in model.parameters()]
        opt.step()
    return Run(w=w, model=model, before=before, grads=grads)


def unchanged_fraction(run, i):
    p = list(run.model.parameters())[i].detach()
    return float((p == run.before[i]).float().mean())


def truth(run):
    assert run.model[0].weight.dtype == torch.bfloat16
    for g in run.grads:
        assert bool((g != 0).all()) and bool(torch.isfinite(g).all())
    assert unchanged_fraction(run, 0) > 0.9  # the first layer's update rounded away
