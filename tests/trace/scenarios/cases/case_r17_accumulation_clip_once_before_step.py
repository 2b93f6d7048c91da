"""Control: gradient accumulation over 4 micro-batches (each loss divided by 4) with
``clip_grad_norm_`` called once, after the last micro-batch's backward and before
``optimizer.step()``. The stepped gradient is the sum of the micro-batch gradients scaled down to
the limit, exactly the clipped total. Every gradient is finite and nonzero; nothing raises.

Source: https://github.com/Deci-AI/super-gradients/pull/653 ("Clipping was done each batch- moved to
being done once before gradient step"; "Unscale gradients before preforming gradient step").
Adapted: a tanh MLP regressor, 4 micro-batches of 16 with the loss divided by 4, clipping at norm
0.05, SGD; the GradScaler of the pull request is left out (CPU, float32).
"""

import torch
from scenario_kit import CLAIMS_ERROR, CLAIMS_NO_ZERO_GRAD, CLAIMS_NONFINITE, HEALTHY_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://github.com/Deci-AI/super-gradients/pull/653"
DESCRIPTION = "control: accumulation over 4 micro-batches, clip_grad_norm_ once before the step"
ASK = []
MUST = [[HEALTHY_OK, r"micro-?batch"]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    CLAIMS_NO_ZERO_GRAD,
    r"clip\w*[^\n]{0,40}(each|every|per) micro-?batch",
]
ACCUM, MAX_NORM = 4, 0.05


def data():
    g = torch.Generator().manual_seed(1)
    x = torch.randn(64, 8, generator=g)
    return x, torch.sin(x @ torch.randn(8, 1, generator=g))


def make_model():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(8, 32), nn.Tanh(), nn.Linear(32, 1))


def micro_grads(model, x, y):
    out = []
    for xb, yb in zip(x.chunk(ACCUM), y.chunk(ACCUM), strict=True):
        loss = F.mse_loss(model(xb), yb) / ACCUM
        out.append(torch.autograd.grad(loss, list(model.parameters())))
    return out


def step(watch):
    model = make_model()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = data()
    micro = micro_grads(model, x, y)
    partial_norms = []
    with watch(model) as w:
        optimizer.zero_grad()
        for xb, yb in zip(x.chunk(ACCUM), y.chunk(ACCUM), strict=True):
            (F.mse_loss(model(xb), yb) / ACCUM).backward()
        partial_norms.append(float(nn.utils.clip_grad_norm_(model.parameters(), MAX_NORM)))
        stepped = [p.grad.detach().clone() for p in model.parameters()]
        optimizer.step()
    return Run(w=w, micro=micro, stepped=stepped, partial_norms=partial_norms)


def truth(run):
    total = [sum(gs) for gs in zip(*run.micro, strict=True)]
    norm = float(torch.sqrt(sum((t**2).sum() for t in total)))
    clipped = [t * min(1.0, MAX_NORM / (norm + 1e-6)) for t in total]
    assert len(run.partial_norms) == 1  # clipped once
    assert norm > MAX_NORM
    for s, c in zip(run.stepped, clipped, strict=True):
        assert torch.allclose(s, c, rtol=1e-4, atol=1e-8)  # exactly the clipped total
        assert bool(torch.isfinite(s).all()) and bool(s.abs().sum() > 0)
