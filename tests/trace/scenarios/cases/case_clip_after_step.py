"""clip_grad_norm_ called after optimizer.step(): the update used the unclipped gradient; the
clip only rescales a .grad nobody reads.

Source: https://theneuralbase.com/pytorch/learn/intermediate/gradient-exploding-gradient-clipping/
("it must be called before optimizer.step() or gradients won't be clipped - calling it after
step() is a silent bug").
"""

import torch
from scenario_kit import FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = (
    "https://theneuralbase.com/pytorch/learn/intermediate/gradient-exploding-gradient-clipping/"
)
DESCRIPTION = "clip_grad_norm_ after opt.step(): the update used the unclipped gradient"
ASK = []
MUST = [
    [
        r"after (the )?(optimizer[ .]?)?step",
        r"clip\w*[^\n]*after",
        r"too late",
        r"no effect",
        r"not (read|used) by the (optimizer|step)",
    ]
]
MUST_NOT = [FALSE_OK]


def _net():
    return nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1))


def step(watch):
    torch.manual_seed(0)
    model = _net()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = torch.randn(16, 4), 10 * torch.randn(16, 1)
    with watch(model) as w:
        opt.zero_grad()
        loss = F.mse_loss(model(x), y)
        loss.backward()
        opt.step()
        nn.utils.clip_grad_norm_(model.parameters(), max_norm=0.1)
    return Run(w=w, model=model, x=x, y=y)


def truth(run):
    torch.manual_seed(0)
    ref = _net()
    grads = torch.autograd.grad(F.mse_loss(ref(run.x), run.y), list(ref.parameters()))
    total = torch.linalg.vector_norm(torch.stack([torch.linalg.vector_norm(g) for g in grads]))
    assert total > 1.0
    for p, p0, g in zip(run.model.parameters(), ref.parameters(), grads, strict=True):
        assert torch.allclose(p.detach(), p0.detach() - 0.1 * g, rtol=1e-4, atol=1e-6)
    now = torch.linalg.vector_norm(
        torch.stack([torch.linalg.vector_norm(p.grad) for p in run.model.parameters()])
    )
    assert abs(float(now) - 0.1) < 1e-3  # clipped afterwards
