"""GradScaler without zero_grad: one batch with an inf makes the gradient inf, the step is
skipped, and since .grad is never cleared every following step is skipped too while the scale
halves each time.

Source: https://github.com/PaddlePaddle/Paddle/issues/67895 (the scale kept shrinking and the
gradients stayed nan/inf "until it reached zero"; the cause was that clear_gradient() was not
called).  Reproduced with torch.amp.GradScaler on CPU.
"""

import torch
from scenario_kit import FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://github.com/PaddlePaddle/Paddle/issues/67895"
DESCRIPTION = "GradScaler, no zero_grad: inf from batch 1 stays in .grad, both steps skipped"
ASK = []
MUST = [
    [r"\binf\b", r"\bnan\b", r"non-?finite"],
    [
        r"zero_grad",
        r"not (been )?(zeroed|reset|cleared)",
        r"accumulat",
        r"skipp",
        r"previous (step|iteration|batch)",
        r"\b2 (backward )?passes",
    ],
]
MUST_NOT = [FALSE_OK]


def step(watch):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    scaler = torch.amp.GradScaler("cpu", init_scale=2.0**16)
    bad = torch.randn(8, 4)
    bad[0, 0] = float("inf")
    batches = [(bad, torch.randn(8, 1)), (torch.randn(8, 4), torch.randn(8, 1))]
    before = [p.detach().clone() for p in model.parameters()]
    with watch(model) as w:
        for x, y in batches:
            loss = F.mse_loss(model(x), y)
            scaler.scale(loss).backward()
            scaler.step(opt)
            scaler.update()
    return Run(w=w, model=model, scaler=scaler, before=before)


def truth(run):
    assert run.scaler.get_scale() == 2.0**14  # halved twice: both steps skipped
    for p, b in zip(run.model.parameters(), run.before, strict=True):
        assert torch.equal(p.detach(), b)
    assert not bool(torch.isfinite(run.model[0].weight.grad).all())
