"""The control of ``adam_eps_one_tiny_steps``: the same regressor and data with torch's default
``eps = 1e-8``.  Every gradient is far above ``eps`` (the adaptive regime), so the first Adam step
is ``lr * g / (|g| + eps)``, about ``lr`` for every entry whatever the gradient's scale: the
scale invariance Adam is used for.  Every gradient is finite and nonzero and every parameter moves.

Source: https://sifal.social/posts/The-Epsilon-Trap-When-Adam-Stops-Being-Adam ("The Adaptive
Regime (sqrt(v) >> epsilon): This is how Adam is supposed to work. The epsilon is negligible";
"The magnitude cancels out. This is scale invariance: whether your gradients are huge or t[iny]").
Adapted: the bug's ``Linear(20, 32)``, ``Tanh``, ``Linear(32, 1)`` regressor (last weight scaled
by 0.01, its bias zeroed), targets of scale 0.01, ``Adam(lr=1e-3)`` with its default ``eps``,
the first step watched.
"""

import torch
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://sifal.social/posts/The-Epsilon-Trap-When-Adam-Stops-Being-Adam"
DESCRIPTION = "control: Adam default eps on gradients ~1e-3: first step ~lr for every entry"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    r"all[- ]zero",
    r"\bzero grad\w*",
    r"\bdead\b",
    r"\beps(ilon)?\b[^\n]{0,40}(large|big|dominat)",
]
LR = 1e-3


def data():
    g = torch.Generator().manual_seed(1)
    x = torch.randn(256, 20, generator=g)
    return x, 0.01 * torch.tanh(x[:, :1] - x[:, 1:2])


def build():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(20, 32), nn.Tanh(), nn.Linear(32, 1))
    with torch.no_grad():
        model[2].weight.mul_(0.01)
        model[2].bias.zero_()
    return model


def step(watch):
    model = build()
    optimizer = torch.optim.Adam(model.parameters(), lr=LR)
    x, y = data()
    before = [p.detach().clone() for p in model.parameters()]
    with watch(model) as w:
        optimizer.zero_grad()
        loss = F.mse_loss(model(x), y)
        loss.backward()
        grads = [p.grad.detach().clone() for p in model.parameters()]
        optimizer.step()
    moves = [(p.detach() - b).abs() for p, b in zip(model.parameters(), before, strict=True)]
    return Run(w=w, model=model, eps=optimizer.param_groups[0]["eps"], grads=grads, moves=moves)


def truth(run):
    assert run.eps == 1e-8
    for g, m in zip(run.grads, run.moves, strict=True):
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0)
        assert float(m.median()) > 0.9 * LR  # about lr per entry
