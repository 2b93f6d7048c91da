"""Feature-based distillation with a hint loss: the student's 8-wide hidden features are matched to
the teacher's 32-wide ones through a projection layer ``student.proj`` (``Linear(32, 8)``), held
by the student and by the optimizer.  The projection is applied to the teacher's features, inside
the ``with torch.no_grad():`` block that runs the frozen teacher, so its output has no graph:
``proj.weight`` and ``proj.bias`` get no gradient (``.grad`` None) and never move, and the student
is trained to match a fixed random projection of the teacher's features.  The student's own layers
get finite, nonzero gradients from the task loss and the hint; nothing raises.

Source: https://www.systemoverflow.com/learn/ml-model-optimization/knowledge-distillation/three-transfer-granularities-response-feature-and-relation-based-distillation
("FEATURE BASED DISTILLATION: Instead of matching only final outputs, match intermediate
representations.  Force student hidden layers to resemble teacher hidden layers ... Requires a
projection layer if dimensions differ").  Adapted: MLP teacher and student; the projection placed
on the teacher's side, under the teacher's ``no_grad``.
"""

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = (
    "https://www.systemoverflow.com/learn/ml-model-optimization/knowledge-distillation/"
    "three-transfer-granularities-response-feature-and-relation-based-distillation"
)
DESCRIPTION = "hint projection applied to teacher features inside no_grad: proj never trains"
ASK = ["proj.weight"]
MUST = [
    [r"^summary:[^\n]*\bproj\b"],
    [
        r"no_grad",
        r"(without|no) (a )?graph",
        r"grad mode",
        r"teacher",
        r"requires_grad",
        r"not (connected|reach\w*)",
    ],
]
MUST_NOT = [
    FALSE_OK,
    CLAIMS_NONFINITE,
    r"dead (units?|relu|neurons?)",
    r"not in (the |any )?optimizer",
]


class Teacher(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(10, 32), nn.Tanh(), nn.Linear(32, 32), nn.Tanh())
        self.head = nn.Linear(32, 5)


class Student(nn.Module):
    def __init__(self, proj_on_teacher: bool):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(10, 8), nn.Tanh())
        self.head = nn.Linear(8, 5)
        self.proj = nn.Linear(32, 8) if proj_on_teacher else nn.Linear(8, 32)


def step(watch, proj_on_teacher: bool = True):
    torch.manual_seed(0)
    teacher = Teacher().requires_grad_(False)
    student = Student(proj_on_teacher)
    opt = torch.optim.Adam(student.parameters(), lr=1e-3)
    g = torch.Generator().manual_seed(1)
    x = torch.randn(32, 10, generator=g)
    y = torch.randint(0, 5, (32,), generator=g)
    before = {n: p.detach().clone() for n, p in student.named_parameters()}
    with watch(student) as w:
        opt.zero_grad()
        with torch.no_grad():
            t_h = teacher.body(x)
            t_logits = teacher.head(t_h)
            if proj_on_teacher:
                target_h = student.proj(t_h)
        s_h = student.body(x)
        s_logits = student.head(s_h)
        hint = F.mse_loss(s_h, target_h) if proj_on_teacher else F.mse_loss(student.proj(s_h), t_h)
        kd = F.kl_div(
            F.log_softmax(s_logits / 2, -1), F.softmax(t_logits / 2, -1), reduction="batchmean"
        )
        loss = F.cross_entropy(s_logits, y) + 4 * kd + hint
        loss.backward()
        opt.step()
    grads = {n: p.grad for n, p in student.named_parameters()}
    moved = {n: not torch.equal(p.detach(), before[n]) for n, p in student.named_parameters()}
    return Run(w=w, grads=grads, moved=moved)


def truth(run):
    assert run.grads["proj.weight"] is None and run.grads["proj.bias"] is None
    assert not run.moved["proj.weight"] and not run.moved["proj.bias"]
    for n in ("body.0.weight", "body.0.bias", "head.weight", "head.bias"):
        gr = run.grads[n]
        assert gr is not None and bool(torch.isfinite(gr).all()) and bool(gr.abs().sum() > 0), n
