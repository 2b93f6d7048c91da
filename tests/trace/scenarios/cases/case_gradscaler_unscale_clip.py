"""Control: the documented AMP recipe with clipping: scale, backward, unscale_, clip, step,
update.  The optimizer reads the unscaled, clipped gradient.

Source: https://kaijuan.co/qa/54716377 (question on gradient clipping with torch.cuda.amp,
answered with the recipe from the PyTorch AMP examples).
"""

import torch
from scenario_kit import CLAIMS_NO_ZERO_GRAD, CLAIMS_NONFINITE, HEALTHY_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://kaijuan.co/qa/54716377"
DESCRIPTION = "control: GradScaler scale/backward/unscale_/clip/step/update, all as documented"
ASK = []
MUST = [[HEALTHY_OK, r"unscale"]]
MUST_NOT = [CLAIMS_NO_ZERO_GRAD, CLAIMS_NONFINITE, r"no gradient", r"zeroed between"]


def _net():
    return nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1))


def step(watch):
    torch.manual_seed(0)
    model = _net()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    scaler = torch.amp.GradScaler("cpu", init_scale=2.0**10)
    x, y = torch.randn(16, 4), 10 * torch.randn(16, 1)
    with watch(model) as w:
        opt.zero_grad()
        loss = F.mse_loss(model(x), y)
        scaler.scale(loss).backward()
        scaler.unscale_(opt)
        nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
        scaler.step(opt)
        scaler.update()
    return Run(w=w, model=model, x=x, y=y)


def truth(run):
    torch.manual_seed(0)
    ref = _net()
    grads = torch.autograd.grad(F.mse_loss(ref(run.x), run.y), list(ref.parameters()))
    total = torch.linalg.vector_norm(torch.stack([torch.linalg.vector_norm(g) for g in grads]))
    assert total > 1.0  # the clip did act
    scale = 1.0 / (total + 1e-6)
    for p, p0, g in zip(run.model.parameters(), ref.parameters(), grads, strict=True):
        assert torch.allclose(p.detach(), p0.detach() - 0.1 * g * scale, rtol=1e-4, atol=1e-6)
