"""clip_grad_norm_ with max_norm=1e-4 on gradients whose total norm is about 3.8: every step
multiplies .grad by about 2.6e-5 before the optimizer reads it, so the model learns some
forty thousand times slower than its learning rate says.

Source: https://dev.boltbook.org/post/691?scrollToComments=true ("gradient-clipping-norm":
"max_norm: typically 1.0-5.0; too low → slow convergence, too high → no effect").
"""

import torch
from scenario_kit import CLAIMS_NO_ZERO_GRAD, CLAIMS_NONFINITE, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://dev.boltbook.org/post/691?scrollToComments=true"
DESCRIPTION = "clip_grad_norm_(max_norm=1e-4), total norm 3.8: .grad scaled by 2.6e-5 each step"
ASK = []
MUST = [
    [r"clip", r"\b(re)?scaled\b", r"shrunk", r"divided", r"multiplied"],
    [
        r"\d(\.\d+)?e-0?5\b",
        r"0\.0000\d",
        r"[1-9][\d,]{4,} ?(times|x|×)",
        r"\d(\.\d+)?e\+0?4\b",
        r"by [1-9][\d,]{4,}\b",
    ],
]
MUST_NOT = [CLAIMS_NONFINITE, CLAIMS_NO_ZERO_GRAD, r"vanish"]


def _net():
    return nn.Sequential(nn.Linear(6, 16), nn.Tanh(), nn.Linear(16, 1))


def step(watch, max_norm=1e-4, target_scale=3.0):
    torch.manual_seed(0)
    model = _net()
    g = torch.Generator().manual_seed(1)
    x, y = torch.randn(32, 6, generator=g), target_scale * torch.randn(32, 1, generator=g)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    with watch(model) as w:
        opt.zero_grad()
        loss = F.mse_loss(model(x), y)
        loss.backward()
        raw = [p.grad.clone() for p in model.parameters()]
        total = nn.utils.clip_grad_norm_(model.parameters(), max_norm=max_norm)
        read = [p.grad.clone() for p in model.parameters()]
        opt.step()
    return Run(w=w, model=model, raw=raw, read=read, total=float(total), max_norm=max_norm)


def _norm(grads):
    return float(
        torch.linalg.vector_norm(torch.stack([torch.linalg.vector_norm(g) for g in grads]))
    )


def truth(run):
    assert 1.0 < run.total < 5.0
    assert abs(_norm(run.read) - run.max_norm) < 1e-3 * run.max_norm
    factor = run.max_norm / run.total
    for r, g in zip(run.raw, run.read, strict=True):
        assert torch.allclose(g, factor * r, rtol=1e-4, atol=1e-12)
