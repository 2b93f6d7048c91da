"""A healthy recipe: one round of self-training.  A teacher trained on 30 labelled examples
predicts the 200 unlabelled ones under ``no_grad``; the predictions whose top probability reaches
the threshold 0.9 become pseudo-labels (``argmax``, integer class indices: there is nothing to
detach), and a fresh student is trained on the labelled and the kept pseudo-labelled examples
together.  The teacher is held by no optimizer and does not move; every student gradient is
finite and nonzero and every student parameter moves.

Source: https://www.chipfoundryservices.com/topic/pseudo-labeling ("1. Train teacher model M on
labeled dataset D_L. 2. Use M to predict labels for unlabeled dataset D_U -> pseudo-labels. 3.
Filter/weight pseudo-labels by confidence (threshold tau). 4. Combine: D_train = D_L u D_U
(filtered). 5. Train student model on D_train"; "Medium (0.8-0.95) | Balance quality and quantity
-> usually optimal").  Adapted: three Gaussian clusters in 6 dimensions, teacher and student both
``Linear(6, 16)``, ``Tanh``, ``Linear(16, 3)``, the teacher trained by 100 Adam steps at 0.01
before the watched student step (SGD at 0.1).
"""

import torch
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://www.chipfoundryservices.com/topic/pseudo-labeling"
DESCRIPTION = "healthy: self-training, teacher's confident argmax pseudo-labels train a student"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    r"all[- ]zero",
    r"\bzero grad\w*",
    r"\bdead\b",
    r"(missing|without|no) \.?detach",
]
THRESHOLD = 0.9


def data():
    g = torch.Generator().manual_seed(1)
    centers = 2.0 * torch.randn(3, 6, generator=g)
    y_l = torch.arange(30) % 3
    x_l = centers[y_l] + torch.randn(30, 6, generator=g)
    y_u = torch.randint(0, 3, (200,), generator=g)
    x_u = centers[y_u] + torch.randn(200, 6, generator=g)
    return x_l, y_l, x_u


def make_model():
    return nn.Sequential(nn.Linear(6, 16), nn.Tanh(), nn.Linear(16, 3))


def step(watch):
    x_l, y_l, x_u = data()
    torch.manual_seed(0)
    teacher = make_model()
    t_opt = torch.optim.Adam(teacher.parameters(), lr=0.01)
    for _ in range(100):
        t_opt.zero_grad()
        F.cross_entropy(teacher(x_l), y_l).backward()
        t_opt.step()
    with torch.no_grad():
        conf, pseudo = teacher(x_u).softmax(1).max(1)
    keep = conf >= THRESHOLD
    x_train = torch.cat([x_l, x_u[keep]])
    y_train = torch.cat([y_l, pseudo[keep]])
    teacher_after = [p.detach().clone() for p in teacher.parameters()]
    torch.manual_seed(3)
    student = make_model()
    optimizer = torch.optim.SGD(student.parameters(), lr=0.1)
    before = [p.detach().clone() for p in student.parameters()]
    with watch(student) as w:
        optimizer.zero_grad()
        loss = F.cross_entropy(student(x_train), y_train)
        loss.backward()
        grads = [p.grad.detach().clone() for p in student.parameters()]
        optimizer.step()
    return Run(w=w, model=student, teacher=teacher, teacher_after=teacher_after, pseudo=pseudo,
               keep=keep, before=before, grads=grads)  # fmt: skip


def truth(run):
    assert not run.pseudo.requires_grad and run.pseudo.dtype == torch.int64
    assert 20 <= int(run.keep.sum()) < 200  # some, not all, pass the threshold
    for p, a in zip(run.teacher.parameters(), run.teacher_after, strict=True):
        assert torch.equal(p.detach(), a)  # the student's step did not touch the teacher
    for g, b, p in zip(run.grads, run.before, run.model.parameters(), strict=True):
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0)
        assert not torch.equal(p.detach(), b)
