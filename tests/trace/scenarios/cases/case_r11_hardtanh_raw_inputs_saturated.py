"""A regressor with a ``Hardtanh`` hidden activation fed raw, unnormalised inputs in [10, 20]: every
hidden pre-activation ``w * x + b`` lies outside [-1, 1] for every example, so ``Hardtanh`` outputs
its bounds and its derivative is 0 everywhere.  The first layer gets an exactly all-zero
gradient on each of the two steps and never moves; only the output layer trains (it fits the
mean from constant features).

Source: https://runebook.dev/ru/docs/pytorch/generated/torch.nn.hardtanh ("Как только значение
выходит за пределы (например, становится больше 1), производная становится равной 0. Это значит,
что веса в этой части сети перестанут обновляться"; "Если твои входные значения всегда лежат в
районе [10,20], Hardtanh всегда будет выдавать 1, и сеть ничему не научится": once a value leaves
the bounds the derivative is 0 and those weights stop updating; with inputs always around
[10, 20] Hardtanh always outputs 1 and the network learns nothing).
"""

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://runebook.dev/ru/docs/pytorch/generated/torch.nn.hardtanh"
DESCRIPTION = "Hardtanh on raw inputs in [10, 20]: every unit saturated, layer 0 all-zero gradient"
ASK = ["0.weight"]
MUST = [
    [r"^summary:[^\n]*\b0\.(weight|bias)"],
    [
        r"hardtanh",
        r"saturat",
        r"clamp",
        r"\bclip",
        r"outside (the |its )?(range|interval|bounds|\[)",
        r"\bflat\b",
    ],
]
MUST_NOT = [FALSE_OK, CLAIMS_NONFINITE, r"no_grad", r"detach", r"not in (the |any )?optimizer"]


def step(watch, standardize: bool = False):
    torch.manual_seed(5)
    model = nn.Sequential(nn.Linear(1, 8), nn.Hardtanh(), nn.Linear(8, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    g = torch.Generator().manual_seed(1)
    x = 10 + 10 * torch.rand(32, 1, generator=g)
    y = (x - 15) / 5 + 0.1 * torch.randn(32, 1, generator=g)
    inputs = (x - 15) / (10 / 12**0.5) if standardize else x
    before = model[0].weight.detach().clone()
    grads = []
    with watch(model) as w:
        for _ in range(2):
            opt.zero_grad()
            loss = F.mse_loss(model(inputs), y)
            loss.backward()
            grads.append({n: p.grad.clone() for n, p in model.named_parameters()})
            opt.step()
    with torch.no_grad():
        pre = model[0](inputs)
    return Run(w=w, grads=grads, pre=pre, moved=not torch.equal(model[0].weight.detach(), before))


def truth(run):
    assert bool((run.pre.abs() > 1).all())  # every unit saturated on every example
    for grads in run.grads:
        assert bool((grads["0.weight"] == 0).all()) and bool((grads["0.bias"] == 0).all())
        assert bool(grads["2.weight"].abs().sum() > 0)
    assert not run.moved
