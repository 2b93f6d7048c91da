"""Gradient episodic memory on the second task of a sequence: the memory of the first task gives a
reference gradient ``g_ref``, the current batch a gradient ``g``, and when they conflict (``g .
g_ref < 0``) the update is projected, ``g - (g . g_ref) / (g_ref . g_ref) * g_ref``, so that the
step does not increase the memory's loss (with one past task, GEM's quadratic program has this
closed form).  The condition was written ``if dot > 0``: the projection is applied when the
gradients agree and skipped when they conflict, as they do here (cosine -0.31).  The ``.grad`` the
optimizer steps with is the raw task-2 gradient, whose inner product with ``g_ref`` is negative:
the step raises the first task's memory loss to first order, which is what GEM exists to prevent.
Two backward passes and ``.grad`` written by hand before the step are part of the method.  Nothing
raises; every gradient is finite and nonzero.

Source: https://www.emergentmind.com/topics/gradient-episodic-memory-gem ("GEM achieves this by
integrating an episodic memory buffer to store past examples and a constrained optimization routine
that projects parameter updates so as not to increase loss on previous tasks").  Adapted: a
regressor ``Linear(4, 32), Tanh, Linear(32, 1)`` trained 40 SGD steps on task 1 (a linear target),
a memory of 32 task-1 examples, task 2 a target that pulls against task 1 on the same inputs,
SGD at 0.05.
"""

import math

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://www.emergentmind.com/topics/gradient-episodic-memory-gem"
DESCRIPTION = "GEM projects when g . g_ref > 0 (sign flipped): conflicting step not projected"
ASK = []
MUST = [
    [r"project\w*", r"constraint", r"g_ref|reference gradient|memory gradient"],
    [
        r"sign",
        r"(dot|inner) product[^\n]{0,40}(negative|< ?0)",
        r"> ?0",
        r"conflict\w*",
        r"flipped|inverted|revers\w*",
        r"(raises|increases) (the )?(memory|task[- ]?1|first task|previous)",
    ],
]
MUST_NOT = [FALSE_OK, CLAIMS_NONFINITE, r"\bdead\b"]


def flat(params):
    return torch.cat([p.grad.flatten() for p in params])


def tasks():
    g = torch.Generator().manual_seed(10)
    x1 = torch.randn(64, 4, generator=g)
    y1 = x1 @ torch.tensor([1.0, -1.0, 0.5, 0.0])
    x2 = torch.randn(64, 4, generator=g)
    y2 = -(x2 @ torch.tensor([1.0, -1.0, 0.5, 0.0])) + x2[:, 3]
    return (x1, y1), (x2, y2)


def step(watch, flipped=True):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 32), nn.Tanh(), nn.Linear(32, 1))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    (x1, y1), (x2, y2) = tasks()
    for _ in range(40):  # task 1
        optimizer.zero_grad()
        F.mse_loss(model(x1).squeeze(-1), y1).backward()
        optimizer.step()
    memory_x, memory_y = x1[:32], y1[:32]
    params = list(model.parameters())
    with watch(model) as w:
        optimizer.zero_grad()
        memory_loss = F.mse_loss(model(memory_x).squeeze(-1), memory_y)
        memory_loss.backward()
        g_ref = flat(params).clone()
        optimizer.zero_grad()
        loss = F.mse_loss(model(x2).squeeze(-1), y2)
        loss.backward()
        g = flat(params).clone()
        dot = float(g @ g_ref)
        if (dot > 0) if flipped else (dot < 0):
            g = g - dot / float(g_ref @ g_ref) * g_ref
        offset = 0
        for p in params:
            p.grad.copy_(g[offset : offset + p.numel()].view_as(p))
            offset += p.numel()
        stepped = flat(params).clone()
        optimizer.step()
    return Run(
        w=w, g_ref=g_ref, stepped=stepped, dot=dot, losses=[float(memory_loss.detach()), float(loss.detach())],
    )  # fmt: skip


def truth(run):
    assert all(math.isfinite(v) for v in run.losses)
    cos = run.dot / float(run.g_ref.norm() * run.stepped.norm())
    assert run.dot < 0 and cos < -0.2  # the task gradients conflict
    assert bool(torch.isfinite(run.stepped).all())
    assert float(run.stepped @ run.g_ref) < -0.2 * float(run.g_ref.norm() * run.stepped.norm())
