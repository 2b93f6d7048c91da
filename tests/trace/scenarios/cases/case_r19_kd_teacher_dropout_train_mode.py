"""Knowledge distillation with the teacher left in training mode: its forward applies dropout (0.2
on the input, 0.5 on the hidden layers), so the soft targets the student is fitted to are those of a
randomly thinned teacher, different at every call, and not the teacher's predictions (the ``eval()``
forward). The teacher runs under ``torch.no_grad()`` and is not in the optimizer, so nothing is
wrong with the gradients as such: the student's gradient is finite and nonzero, but it is the
gradient towards noisy targets (it differs from the gradient towards the eval-mode teacher's soft
targets). Nothing raises.

Source: https://deepwiki.com/poperson1205/knowledge_distillation/2-model-architecture ("| Dropout
layers | Always active | Optional (configurable) |"; "The Teacher model's forward pass
(models.py15-21) always applies dropout during both training and inference"). Adapted: a teacher
20-128-128-5 with the page's dropout rates and ReLU, a student 20-64-5 with ReLU and no dropout,
temperature 4, half soft-target KL (times T^2) and half cross-entropy, SGD at 0.1; the teacher is
seeded, not trained.
"""

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://deepwiki.com/poperson1205/knowledge_distillation/2-model-architecture"
DESCRIPTION = "distillation with the teacher in train mode: dropout makes the soft targets noisy"
ASK = []
MUST = [
    [
        r"teacher[^\n]{0,100}(train(ing)?[- ]mode|dropout|eval\(\)|eval mode|\.training)",
        r"(train(ing)?[- ]mode|dropout|eval\(\)|eval mode)[^\n]{0,100}teacher",
    ],
]
MUST_NOT = [FALSE_OK, CLAIMS_NONFINITE]
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


def step(watch, teacher_eval=False):
    torch.manual_seed(0)
    model = Distill()
    optimizer = torch.optim.SGD(model.student.parameters(), lr=0.1)
    x, y = data()
    model.train()
    if teacher_eval:
        model.teacher.eval()
    torch.manual_seed(2)  # the dropout masks
    with watch(model) as w:
        optimizer.zero_grad()
        with torch.no_grad():
            teacher_logits = model.teacher(x)
        loss = kd_loss(model.student(x), teacher_logits, y)
        loss.backward()
        grads = {n: p.grad.detach().clone() for n, p in model.student.named_parameters()}
        optimizer.step()
    return Run(w=w, model=model, x=x, y=y, teacher_logits=teacher_logits, grads=grads)


def eval_targets_grads(run):
    """The teacher's eval-mode logits, and the student's gradient (initial weights) towards them."""
    torch.manual_seed(0)
    fresh = Distill()
    fresh.teacher.eval()
    with torch.no_grad():
        teacher_logits = fresh.teacher(run.x)
    params = list(fresh.student.parameters())
    grads = torch.autograd.grad(kd_loss(fresh.student(run.x), teacher_logits, run.y), params)
    return teacher_logits, grads


def truth(run):
    assert run.model.teacher.training  # never switched to eval()
    eval_logits, eval_grads = eval_targets_grads(run)
    assert (run.teacher_logits - eval_logits).abs().max() > 0.05  # not the teacher's predictions
    with torch.no_grad():
        again = run.model.teacher(run.x)  # the teacher did not move; a new dropout mask
    assert not torch.allclose(again, run.teacher_logits)
    for (n, g), e in zip(run.grads.items(), eval_grads, strict=True):
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
        assert not torch.allclose(g, e, atol=1e-5), n  # pulled towards the noisy targets
