"""Knowledge distillation with teacher and student in one module.  The teacher is put in
``eval()`` but its forward runs with autograd on, and the optimizer is built over the whole
module's parameters: the KD term ``T^2 * KL(softmax(t/T) || softmax(s/T))`` sends gradient into
the teacher too, and Adam moves the frozen-in-intent teacher toward the student every step.

Source: https://smarttldr.pages.dev/en/topic/python-knowledge-distillation/deep-dive (its loop:
``teacher.eval()  # Teacher is frozen``, ``with torch.no_grad(): teacher_logits = teacher(inputs)``,
``optimizer = torch.optim.Adam(student.parameters(), lr=lr)``; the step drops the ``no_grad`` and
builds the optimizer over the module that holds both).
"""

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://smarttldr.pages.dev/en/topic/python-knowledge-distillation/deep-dive"
DESCRIPTION = (
    "KD: teacher (eval) forward with grad, optimizer over teacher + student: teacher moves"
)
ASK = []
MUST = [
    [r"^summary:[^\n]*teacher"],
    [r"\beval\b", r"moved", r"stepped", r"updated", r"optimi[sz]er"],
]
MUST_NOT = [FALSE_OK, CLAIMS_NONFINITE]


class Distiller(nn.Module):
    def __init__(self):
        super().__init__()
        self.teacher = nn.Sequential(
            nn.Linear(10, 32), nn.ReLU(), nn.Dropout(0.3), nn.Linear(32, 5)
        )
        self.student = nn.Sequential(nn.Linear(10, 16), nn.ReLU(), nn.Linear(16, 5))


def kd_loss(s, t, y, temperature=4.0, alpha=0.7):
    soft = (
        F.kl_div(
            F.log_softmax(s / temperature, dim=1),
            F.softmax(t / temperature, dim=1),
            reduction="batchmean",
        )
        * temperature**2
    )
    return alpha * soft + (1 - alpha) * F.cross_entropy(s, y)


def step(watch, frozen: bool = False):
    torch.manual_seed(0)
    model = Distiller()
    model.teacher.eval()
    model.student.train()
    params = model.student.parameters() if frozen else model.parameters()
    optimizer = torch.optim.Adam(params, lr=1e-2)
    g = torch.Generator().manual_seed(1)
    x, y = torch.randn(32, 10, generator=g), torch.randint(0, 5, (32,), generator=g)
    before = {n: p.detach().clone() for n, p in model.named_parameters()}
    with watch(model) as w:
        optimizer.zero_grad()
        if frozen:
            with torch.no_grad():
                t = model.teacher(x)
        else:
            t = model.teacher(x)
        loss = kd_loss(model.student(x), t, y)
        loss.backward()
        optimizer.step()
    return Run(
        w=w,
        before=before,
        after={n: p.detach().clone() for n, p in model.named_parameters()},
        grads={n: p.grad for n, p in model.named_parameters()},
    )


def truth(run):
    assert run.grads["teacher.0.weight"] is not None
    assert not torch.equal(run.before["teacher.0.weight"], run.after["teacher.0.weight"])
    assert not torch.equal(run.before["student.0.weight"], run.after["student.0.weight"])
