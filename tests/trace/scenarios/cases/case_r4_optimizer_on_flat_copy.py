"""For a faster optimizer the parameters are flattened into one contiguous buffer:
``flat = nn.Parameter(torch.cat([p.detach().flatten() for p in model.parameters()]))`` and the
optimizer is built on ``[flat]``.  But ``torch.cat`` made a copy: the model keeps computing with
its own parameters, which get ``.grad`` every step and are never stepped, while ``flat`` gets
no gradient.

Source: https://github.com/PhilJd/contiguous_pytorch_params/issues/4 ("The trick of the
contiguous parameters is to change the parameter representation into a single buffer for the
optimizer, so it's by design that there's no updates on the original parameter list").
"""

import torch
from scenario_kit import FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://github.com/PhilJd/contiguous_pytorch_params/issues/4"
DESCRIPTION = "optimizer on a torch.cat copy of the parameters: model gets .grad, never moves"
ASK = ["0.weight"]
MUST = [
    [r"optimizer"],
    [
        r"not (held|in (the|any) optimizer)",
        r"no optimizer",
        r"(does not|doesn't|did not) hold",
        r"holds? none",
        r"never (moved|updated|stepped)",
        r"did not (move|change)",
        r"not (updated|optimi[sz]ed|stepped)",
        r"\bcopy\b",
    ],
]
MUST_NOT = [FALSE_OK]


def step(watch):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(6, 12), nn.Tanh(), nn.Linear(12, 2))
    flat = nn.Parameter(torch.cat([p.detach().flatten() for p in model.parameters()]))
    opt = torch.optim.Adam([flat], lr=1e-2)
    g = torch.Generator().manual_seed(1)
    x, y = torch.randn(16, 6, generator=g), torch.randn(16, 2, generator=g)
    before = [p.detach().clone() for p in model.parameters()]
    with watch(model) as w:
        opt.zero_grad()
        F.mse_loss(model(x), y).backward()
        opt.step()
    return Run(w=w, model=model, flat=flat, opt=opt, before=before)


def truth(run):
    assert run.flat.grad is None
    held = [p for g in run.opt.param_groups for p in g["params"]]
    assert all(q is run.flat for q in held)
    for p, b in zip(run.model.parameters(), run.before, strict=True):
        assert p.grad is not None and bool(p.grad.abs().sum() > 0)
        assert torch.equal(p.detach(), b)
