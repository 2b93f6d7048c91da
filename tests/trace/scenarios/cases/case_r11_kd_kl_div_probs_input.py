"""Knowledge distillation with ``F.kl_div`` given the student's softmax probabilities as its
input, where it expects log-probabilities (the target, the teacher's softened probabilities, is
right).  ``kl_div(p, q)`` computes ``sum q * (log q - p)``: with ``p`` a probability that is
``-H(q) - sum q * p``, always negative, and its gradient pushes the student's probabilities up
linearly in ``q`` instead of matching the teacher's distribution.  The distillation term is
negative from the first batch (a KL divergence is never negative); every gradient is finite.

Source: https://docs.pytorch.org/docs/1.10/generated/torch.nn.functional.kl_div.html ("input -
Tensor of arbitrary shape in log-probabilities"; "target - Tensor of the same shape as input.
See log_target for the target's interpretation").  The step: a teacher under ``no_grad``, a
student trained on ``0.5 * CE + 0.5 * T**2 * KD`` at temperature 4, reduction ``batchmean``.
"""

import torch
from scenario_kit import FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://docs.pytorch.org/docs/1.10/generated/torch.nn.functional.kl_div.html"
DESCRIPTION = "KD with F.kl_div(student softmax probabilities, teacher probs): KL term negative"
ASK = []
MUST = [
    [r"kl_div", r"KLDiv", r"\bKL\b", r"divergence"],
    [
        r"log-?probabilit",
        r"log_softmax",
        r"not (a |in )?log",
        r"probabilities (as|for) (the |its )?input",
        r"negative (loss|KL|value|divergence)",
        r"(loss|KL|divergence|term) (is |was |goes |went )?(below zero|negative)",
    ],
]
MUST_NOT = [FALSE_OK]
T = 4.0


def step(watch, log_input: bool = False):
    torch.manual_seed(0)
    teacher = nn.Sequential(nn.Linear(8, 64), nn.ReLU(), nn.Linear(64, 5))
    student = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 5))
    opt = torch.optim.SGD(student.parameters(), lr=0.1)
    g = torch.Generator().manual_seed(1)
    x, y = torch.randn(32, 8, generator=g), torch.randint(0, 5, (32,), generator=g)
    with watch(student) as w:
        opt.zero_grad()
        with torch.no_grad():
            t_logits = teacher(x)
        s_logits = student(x)
        target = F.softmax(t_logits / T, dim=-1)
        if log_input:
            kd = F.kl_div(F.log_softmax(s_logits / T, dim=-1), target, reduction="batchmean")
        else:
            kd = F.kl_div(F.softmax(s_logits / T, dim=-1), target, reduction="batchmean")
        loss = 0.5 * F.cross_entropy(s_logits, y) + 0.5 * T * T * kd
        loss.backward()
        opt.step()
    s = s_logits.detach() / T
    true_kl = (target * (target.log() - F.log_softmax(s, dim=-1))).sum(-1).mean()
    grads = [p.grad for p in student.parameters()]
    return Run(w=w, kd=kd.item(), true_kl=true_kl.item(), grads=grads)


def truth(run):
    assert run.kd < 0 <= run.true_kl
    assert all(g is not None and bool(torch.isfinite(g).all()) for g in run.grads)
