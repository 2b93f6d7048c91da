"""Control: the same classifier and batch with ``torch.optim.AdamW(..., weight_decay=0.1)``: the
decay is applied to the weights directly, ``w <- w - lr * 0.1 * w``, apart from the adaptive step
on the gradient.  On the first step every entry's update is the plain Adam step plus exactly
``-lr * 0.1 * w``.  Every gradient is finite and nonzero.

Source: https://codemia.io/knowledge-hub/path/what_is_the_proper_way_to_weight_decay_for_adam_optimizer
("With Adam, that shortcut breaks down: the proper modern approach is usually decoupled weight
decay, commonly known as AdamW, rather than adding an L2 penalty term directly into the adaptive
gradient update"; ``optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3,
weight_decay=1e-2)``).  Adapted: lr 1e-2 and weight decay 0.1, as the Adam case.
"""

import torch
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://codemia.io/knowledge-hub/path/what_is_the_proper_way_to_weight_decay_for_adam_optimizer"
DESCRIPTION = "control: AdamW(weight_decay=0.1), decay decoupled from the adaptive step"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [CLAIMS_NONFINITE, CLAIMS_ERROR, r"\bL2\b", r"no gradient", r"all-zero"]
LR, WD = 1e-2, 0.1


def make_model():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(10, 32), nn.Tanh(), nn.Linear(32, 3))


def batch():
    g = torch.Generator().manual_seed(1)
    return torch.randn(64, 10, generator=g), torch.randint(0, 3, (64,), generator=g)


def first_update(optimizer_cls, weight_decay):
    model = make_model()
    opt = optimizer_cls(model.parameters(), lr=LR, weight_decay=weight_decay)
    x, y = batch()
    before = [p.detach().clone() for p in model.parameters()]
    opt.zero_grad()
    F.cross_entropy(model(x), y).backward()
    opt.step()
    return [p.detach() - b for p, b in zip(model.parameters(), before, strict=True)]


def step(watch):
    model = make_model()
    optimizer = torch.optim.AdamW(model.parameters(), lr=LR, weight_decay=WD)
    x, y = batch()
    weights = [p.detach().clone() for p in model.parameters()]
    updates, grads = [], []
    with watch(model) as w:
        for _ in range(2):
            before = [p.detach().clone() for p in model.parameters()]
            optimizer.zero_grad()
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            grads.append([p.grad.detach().clone() for p in model.parameters()])
            optimizer.step()
            updates.append(
                [p.detach() - b for p, b in zip(model.parameters(), before, strict=True)]
            )
    plain = first_update(torch.optim.Adam, 0.0)
    return Run(w=w, weights=weights, updates=updates, grads=grads, plain=plain)


def truth(run):
    for gs in run.grads:
        for g in gs:
            assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0)
    for upd, plain, w in zip(run.updates[0], run.plain, run.weights, strict=True):
        # the plain Adam step plus the decoupled decay -lr * wd * w
        assert torch.allclose(upd - plain, -LR * WD * w, atol=1e-6)
