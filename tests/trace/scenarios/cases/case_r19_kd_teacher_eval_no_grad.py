"""Control: the same distillation step with the teacher switched to ``eval()`` (dropout off) and run
under ``torch.no_grad()``: the soft targets are the teacher's deterministic predictions, the same at
every call, the teacher gets no gradient and does not move, and every student parameter gets a
finite, nonzero gradient (the gradient towards the eval-mode teacher's soft targets) and moves.

Source: https://deepwiki.com/poperson1205/knowledge_distillation/2.1-teacher-model ("The Teacher
Model in knowledge distillation acts as the 'expert' network ... It processes input data and
produces 'soft targets' (probability distributions)"; "dropout_20 | Dropout layer with 0.2
probability", "dropout_50 | Dropout layer with 0.5 probability"). Adapted: the teacher 20-128-128-5
with the page's dropout rates and ReLU, in eval mode for the soft targets; a student 20-64-5 with
ReLU, temperature 4, half soft-target KL (times T^2) and half cross-entropy, SGD at 0.1; the teacher
is seeded, not trained.
"""

import torch
from scenario_kit import CLAIMS_NONFINITE, HEALTHY_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://deepwiki.com/poperson1205/knowledge_distillation/2.1-teacher-model"
DESCRIPTION = "control: distillation with the teacher in eval() under no_grad: fixed soft targets"
ASK = []
MUST = [[HEALTHY_OK, r"^summary:[^\n]*teacher[^\n]*(no_grad|no gradient|frozen|not (held|in))"]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    r"teacher[^\n]{0,80}(in )?train(ing)?[- ]mode",
    r"student\.\d\.(weight|bias)[^\n]{0,60}(no gradient|\bNone\b|did not move|never moved)",
]
T = 4.0


class Distill(nn.Module):
    def __init__(self):
        super().__init__()
        self.teacher = nn.Sequential(
            nn.Dropout(0.2), nn.Linear(20, 128), nn.ReLU(), nn.Dropout(0.5),
            nn.Linear(128, 128), nn.ReLU(), nn.Dropout(0.5), nn.Linear(128, 5),
        )  # fmt: skip
        self.student = nn.Sequential(nn.Linear(20, 64), nn.ReLU(), nn.Linear(64, 5))


def data():
    g = torch.Generator().manual_seed(1)
    x = torch.randn(128, 20, generator=g)
    return x, (x[:, :5].argmax(1))


def kd_loss(student_logits, teacher_logits, y):
    soft = F.kl_div(
        F.log_softmax(student_logits / T, dim=1),
        F.softmax(teacher_logits / T, dim=1),
        reduction="batchmean",
    )
    return 0.5 * soft * T * T + 0.5 * F.cross_entropy(student_logits, y)


def step(watch):
    torch.manual_seed(0)
    model = Distill()
    optimizer = torch.optim.SGD(model.student.parameters(), lr=0.1)
    x, y = data()
    model.train()
    model.teacher.eval()
    teacher_before = {n: p.detach().clone() for n, p in model.teacher.named_parameters()}
    torch.manual_seed(2)
    with watch(model) as w:
        optimizer.zero_grad()
        with torch.no_grad():
            teacher_logits = model.teacher(x)
        loss = kd_loss(model.student(x), teacher_logits, y)
        loss.backward()
        grads = {n: p.grad.detach().clone() for n, p in model.student.named_parameters()}
        student_before = {n: p.detach().clone() for n, p in model.student.named_parameters()}
        optimizer.step()
    return Run(
        w=w, model=model, x=x, y=y, teacher_logits=teacher_logits, grads=grads,
        teacher_before=teacher_before, student_before=student_before,
    )  # fmt: skip


def truth(run):
    assert not run.model.teacher.training
    torch.manual_seed(0)
    fresh = Distill()
    fresh.teacher.eval()
    with torch.no_grad():
        eval_logits = fresh.teacher(run.x)
    assert torch.equal(run.teacher_logits, eval_logits)  # the teacher's own predictions
    params = list(fresh.student.parameters())
    eval_grads = torch.autograd.grad(kd_loss(fresh.student(run.x), eval_logits, run.y), params)
    for (n, g), e in zip(run.grads.items(), eval_grads, strict=True):
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
        assert torch.allclose(g, e, atol=1e-6), n
    for n, p in run.model.teacher.named_parameters():
        assert p.grad is None and torch.equal(p.detach(), run.teacher_before[n]), n
    for n, p in run.model.student.named_parameters():
        assert not torch.equal(p.detach(), run.student_before[n]), n
