"""Elastic weight consolidation whose anchor ``theta_A*`` is stored as ``{n: p for n, p in
model.named_parameters()}``: the dictionary holds the parameters themselves, not copies of their
values after task A.  While task B trains, the anchor moves with the weights, ``p - anchor`` is
exactly zero, and the penalty ``lambda / 2 * sum F (p - anchor)^2`` is 0 with a zero gradient at
every step: task B trains as if there were no consolidation, and the Fisher information is
computed for nothing.  Every gradient (task B's) is finite and nonzero; nothing raises.

Source: https://discuss.pytorch.org/t/implementation-of-elastic-weight-consolidation-fisher-information-matrix/9309
("I was wondering if anyone has implemented Elastic Weight Consolidation (EWC)"; "The main part of
implementing this is calculating the Fisher information matrix"; "The importance is the squared
gradient averaged over each minibatch").  Adapted: a ``Linear(10, 32), Tanh, Linear(32, 2)``
classifier trained 30 SGD steps on task A, the diagonal Fisher as the mean of per-example squared
gradients over 64 task-A examples, then two watched SGD steps (lr 0.1) on task B (another rule on
other inputs) with ``lambda = 100``.
"""

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = (
    "https://discuss.pytorch.org/t/"
    "implementation-of-elastic-weight-consolidation-fisher-information-matrix/9309"
)
DESCRIPTION = "EWC anchor dict holds the parameters themselves: p - anchor = 0, penalty always 0"
ASK = []
MUST = [
    [
        r"\bclone\w*",
        r"\bcop(y|ied|ies)\b",
        r"referenc\w*",
        r"same (tensor|object|parameter)s?",
        r"alias\w*",
        r"anchor",
        r"penalty[^\n]{0,80}(zero|\b0\b|no effect|nothing|constant)",
        r"(ewc|consolidation|fisher)[^\n]{0,80}(zero|\b0\b|no effect|nothing)",
    ]
]
MUST_NOT = [
    FALSE_OK,
    CLAIMS_NONFINITE,
    r"\bdead\b",
    r"requires_grad\s*(=|is|was)?\s*False",
    r"not in (the |any )?optimi[sz]er",
]
LAMBDA = 100.0


def task(seed, shift):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(64, 10, generator=g) + shift
    w = torch.randn(10, generator=g)
    return x, (x @ w > shift * w.sum()).long()


def fisher(model, x, y):
    f = {n: torch.zeros_like(p) for n, p in model.named_parameters()}
    for i in range(len(x)):
        model.zero_grad()
        F.cross_entropy(model(x[i : i + 1]), y[i : i + 1]).backward()
        for n, p in model.named_parameters():
            f[n] += p.grad.detach().pow(2) / len(x)
    model.zero_grad()
    return f


def step(watch, copy_anchor=False):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(10, 32), nn.Tanh(), nn.Linear(32, 2))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    xa, ya = task(1, 0.0)
    for _ in range(30):  # task A
        optimizer.zero_grad()
        F.cross_entropy(model(xa), ya).backward()
        optimizer.step()
    fish = fisher(model, xa, ya)
    if copy_anchor:
        anchor = {n: p.detach().clone() for n, p in model.named_parameters()}
    else:
        anchor = {n: p for n, p in model.named_parameters()}
    xb, yb = task(2, 1.0)
    iterations = []
    with watch(model) as w:
        for _ in range(2):  # task B
            at = {n: p.detach().clone() for n, p in model.named_parameters()}
            optimizer.zero_grad()
            penalty = sum(
                (fish[n] * (p - anchor[n]).pow(2)).sum() for n, p in model.named_parameters()
            )
            loss = F.cross_entropy(model(xb), yb) + LAMBDA / 2 * penalty
            loss.backward()
            grads = {n: p.grad.detach().clone() for n, p in model.named_parameters()}
            iterations.append((penalty.item(), at, grads))
            optimizer.step()
    return Run(w=w, model=model, anchor=anchor, fisher=fish, iterations=iterations)


def truth(run):
    for n, p in run.model.named_parameters():
        assert run.anchor[n] is p, n  # the anchor is the parameter itself
        assert bool((run.fisher[n] > 0).any()), n
    for penalty, _, grads in run.iterations:
        assert penalty == 0.0
        for n, g in grads.items():
            assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
