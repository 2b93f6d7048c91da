"""A small segmentation network trained with a soft Dice loss ``1 - 2 sum(p t) / (sum(p) +
sum(t) + eps)``, the smoothing term in the denominator only.  The batch is background patches:
every target mask is empty.  Then ``sum(p t)`` is 0 whatever the prediction, the Dice coefficient
is exactly 0, the loss exactly 1, and its derivative ``2 t / D - 2 sum(p t) / D^2`` is exactly 0:
every parameter gets an all-zero gradient and the step moves nothing, so the network never learns
to predict background.

Source: https://ar5iv.labs.arxiv.org/html/2207.09521 ("The Dice loss in the context of missing or
empty labels: introducing Phi and epsilon": "we highlight the peculiar action of the Dice loss in
the presence of missing or empty labels"; "With Phi chosen such that the reductions happen over
multiple batch elements or with a heuristic value for epsilon, the Dice loss handles empty labels
correctly").
"""

import torch
from scenario_kit import FALSE_OK, Run
from torch import nn

SOURCE = "https://ar5iv.labs.arxiv.org/html/2207.09521"
DESCRIPTION = "soft Dice, eps in the denominator only, all masks empty: gradient exactly zero"
ASK = ["0.weight"]
MUST = [
    [r"all-zero", r"exactly zero", r"zero gradient", r"gradients? (is|are|was|were) (all )?zero"],
    [
        r"(in|by|at|from) the loss",
        r"after the model",
        r"\btargets?\b",
        r"\bmasks?\b",
        r"\bdice\b",
        r"MulBackward",
        r"DivBackward",
    ],
]
MUST_NOT = [FALSE_OK, r"\bdead\b", r"vanish", r"\bnan\b", r"float16|underflow"]


def make_net():
    return nn.Sequential(
        nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 1, 3, padding=1), nn.Sigmoid()
    )


def dice_loss(p, t, smooth_both: bool):
    inter, total = (p * t).sum(), p.sum() + t.sum()
    if smooth_both:  # smoothing term in numerator and denominator
        return 1 - (2 * inter + 1.0) / (total + 1.0)
    return 1 - 2 * inter / (total + 1e-6)


def step(watch, smooth_both: bool = False):
    torch.manual_seed(0)
    model = make_net()
    g = torch.Generator().manual_seed(1)
    x = torch.rand(4, 1, 16, 16, generator=g)
    t = torch.zeros(4, 1, 16, 16)  # background patches: no foreground pixel anywhere
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    before = {n: p.detach().clone() for n, p in model.named_parameters()}
    with watch(model) as w:
        opt.zero_grad()
        loss = dice_loss(model(x), t, smooth_both)
        loss.backward()
        grads = {n: p.grad.clone() for n, p in model.named_parameters()}
        opt.step()
    after = {n: p.detach().clone() for n, p in model.named_parameters()}
    return Run(w=w, loss=loss.item(), grads=grads, before=before, after=after)


def truth(run):
    assert run.loss == 1.0  # 1 - 0 / (sum(p) + eps)
    for n, g in run.grads.items():
        assert bool((g == 0).all()), n  # exactly zero, every entry
        assert torch.equal(run.before[n], run.after[n]), n  # nothing moved
