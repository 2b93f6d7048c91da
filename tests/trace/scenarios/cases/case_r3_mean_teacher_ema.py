"""Control: a mean-teacher step.  The watched module holds the student and a teacher copied
from it (requires_grad=False); the student sees noisy inputs, the teacher other noise under
torch.no_grad(), the loss is cross-entropy plus a consistency term between the two softmax
outputs; the optimizer steps the student, then the teacher's weights move towards the
student's as an exponential moving average, in place under no_grad.

Source: http://gh.doourdo.com/ivadomed/ms-lesion-agnostic/issues/52 (a copy of
ivadomed/ms-lesion-agnostic#52, "Mean teacher model training": "Let the optimizer update the
student weights normally.  Let the teacher weights be an exponential moving average (EMA) of
the student weights. That is, after each training step, update the teacher weights a little
bit toward the student weights").
"""

import copy

import torch
from scenario_kit import CLAIMS_NO_ZERO_GRAD, CLAIMS_NONFINITE, HEALTHY_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "http://gh.doourdo.com/ivadomed/ms-lesion-agnostic/issues/52"
DESCRIPTION = "control: mean teacher, frozen teacher moved by an EMA after the student's step"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_NO_ZERO_GRAD,
    r"teacher[^\n]*(moved|changed|updated) by (an |the )?optimizer",
    r"optimizer step[^\n]*(still )?moved[^\n]*teacher",
    r"frozen[^\n]*(an |the )?optimizer step[^\n]*moved",
    r"(updated|stepped) twice",
]

ALPHA = 0.99


class MeanTeacher(nn.Module):
    def __init__(self):
        super().__init__()
        self.student = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 3))
        self.teacher = copy.deepcopy(self.student)
        self.teacher.requires_grad_(False)

    def forward(self, x):
        return self.student(x)


def step(watch):
    torch.manual_seed(0)
    model = MeanTeacher()
    opt = torch.optim.SGD(model.student.parameters(), lr=0.1)
    g = torch.Generator().manual_seed(1)
    x, y = torch.randn(32, 8, generator=g), torch.randint(0, 3, (32,), generator=g)
    noise_s, noise_t = 0.1 * torch.randn(32, 8, generator=g), 0.1 * torch.randn(32, 8, generator=g)
    with watch(model) as w:
        opt.zero_grad()
        logits = model(x + noise_s)
        with torch.no_grad():
            teacher_logits = model.teacher(x + noise_t)
        consistency = F.mse_loss(logits.softmax(1), teacher_logits.softmax(1))
        loss = F.cross_entropy(logits, y) + consistency
        loss.backward()
        opt.step()
        student_after = [p.detach().clone() for p in model.student.parameters()]
        teacher_before = [p.detach().clone() for p in model.teacher.parameters()]
        with torch.no_grad():
            for t, s in zip(model.teacher.parameters(), model.student.parameters(), strict=True):
                t.mul_(ALPHA).add_(s, alpha=1 - ALPHA)
    return Run(w=w, model=model, student_after=student_after, teacher_before=teacher_before)


def truth(run):
    for p in run.model.student.parameters():
        assert p.grad is not None and bool(torch.isfinite(p.grad).all())
    for t, t0, s in zip(
        run.model.teacher.parameters(), run.teacher_before, run.student_after, strict=True
    ):
        assert t.grad is None and not t.requires_grad
        assert torch.allclose(t.detach(), ALPHA * t0 + (1 - ALPHA) * s)  # the EMA
        assert not torch.equal(t.detach(), t0)
