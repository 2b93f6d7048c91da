"""A healthy step that looks broken: DINO self-distillation with a teacher that is never trained by
gradient.  The teacher is a copy of the student with ``requires_grad`` off; its outputs are
centred (a running mean of the teacher's outputs is subtracted) and sharpened (temperature 0.04
against the student's 0.1) and used as stop-gradient targets; after each optimizer step the
teacher's weights follow the student's by an exponential moving average (momentum 0.996) and the
centre by another (0.9).  The student (the watched model) gets finite, nonzero gradients at both
steps and moves; the teacher gets none and moves only by the moving average, as the method says.

Source: https://www.xuqiongjie.com/post/ai-fundamentals/ssl/dino (DINO's PyTorch pseudocode
without multi-crop: ``loss = H(t1, s2)/2 + H(t2, s1)/2``, ``update(gs) # SGD``, ``gt.params =
l*gt.params + (1-l)*gs.params``, ``C = m*C + (1-m)*cat([t1, t2]).mean(dim=0)``, ``t = t.detach() #
stop gradient``, ``t = softmax((t - C) / tpt, dim=1) # center + sharpen``).  Adapted: a
``Linear(16, 32), GELU, Linear(32, 32), GELU, Linear(32, 64)`` student over 64 outputs, two noisy
views of 128 examples, two iterations, SGD at 0.05.
"""

import copy
import math

import torch
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://www.xuqiongjie.com/post/ai-fundamentals/ssl/dino"
DESCRIPTION = "healthy: DINO student step, teacher EMA under stop-gradient, centre + sharpening"
ASK = []
MUST = [
    [
        HEALTHY_OK,
        r"teacher[^\n]{0,80}(ema|moving average|no gradient|not trained|frozen|stop[- ]grad\w*)",
    ]
]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    r"all[- ]zero",
    r"\bzero grad\w*",
    r"\bdead\b",
    r"collaps\w*",
]
TPS, TPT, MOMENTUM, CENTER_MOMENTUM = 0.1, 0.04, 0.996, 0.9


def H(t, s, center):
    t = t.detach()  # stop gradient
    s = F.log_softmax(s / TPS, dim=1)
    t = F.softmax((t - center) / TPT, dim=1)  # centre + sharpen
    return -(t * s).sum(dim=1).mean()


def step(watch):
    torch.manual_seed(0)
    student = nn.Sequential(
        nn.Linear(16, 32), nn.GELU(), nn.Linear(32, 32), nn.GELU(), nn.Linear(32, 64)
    )
    teacher = copy.deepcopy(student).requires_grad_(False)
    center = torch.zeros(64)
    optimizer = torch.optim.SGD(student.parameters(), lr=0.05)
    g = torch.Generator().manual_seed(1)
    x = torch.randn(128, 16, generator=g)
    iterations = []
    with watch(student) as w:
        for _ in range(2):
            x1 = x + 0.1 * torch.randn(x.shape, generator=g)
            x2 = x + 0.1 * torch.randn(x.shape, generator=g)
            s1, s2 = student(x1), student(x2)
            t1, t2 = teacher(x1), teacher(x2)
            optimizer.zero_grad()
            loss = H(t1, s2, center) / 2 + H(t2, s1, center) / 2
            loss.backward()
            before = [p.detach().clone() for p in student.parameters()]
            grads = [p.grad.detach().clone() for p in student.parameters()]
            optimizer.step()
            with torch.no_grad():
                teacher_before = [p.clone() for p in teacher.parameters()]
                for pt, ps in zip(teacher.parameters(), student.parameters(), strict=True):
                    pt.mul_(MOMENTUM).add_((1 - MOMENTUM) * ps)
                batch_center = torch.cat([t1, t2]).mean(0)
                center = CENTER_MOMENTUM * center + (1 - CENTER_MOMENTUM) * batch_center
            iterations.append((loss.item(), before, grads, teacher_before))
    return Run(w=w, student=student, teacher=teacher, iterations=iterations, center=center)


def truth(run):
    for loss, _, grads, _ in run.iterations:
        assert math.isfinite(loss) and loss > 0
        for g in grads:
            assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0)
        for pt in run.teacher.parameters():
            assert pt.grad is None and not pt.requires_grad
    for pt, tb in zip(run.teacher.parameters(), run.iterations[-1][3], strict=True):
        assert not torch.equal(pt, tb)  # the teacher moved by the moving average
    for p, b in zip(run.student.parameters(), run.iterations[-1][1], strict=True):
        assert not torch.equal(p.detach(), b)  # the student moved by SGD
    assert bool(run.center.abs().sum() > 0)
