"""Knowledge distillation at temperature 4 with the soft term not multiplied by ``T**2``: ``loss =
0.5 * CE(student, y) + 0.5 * KL(softmax(t / T) || softmax(s / T))``.  The soft term's gradient
with respect to the student's logits is ``(softmax(s / T) - softmax(t / T)) / T``, and the
differences of softened probabilities are themselves about ``1 / T`` of the unsoftened ones: the
soft term's gradient is about ``1 / T**2`` (1/16) of what the recipe intends, and the teacher's
soft targets barely reach the student next to the hard labels.  Every gradient is finite and
nonzero; nothing raises.

Source: https://www.systemoverflow.com/learn/ml-model-optimization/knowledge-distillation/training-recipe-loss-functions-temperature-and-data-pipelines
("Soft loss: KL divergence between student and teacher distributions at temperature T. The formula:
L = alpha x hard_loss + (1-alpha) x T^2 x soft_loss. The T^2 compensates for gradient shrinkage at
high temperatures. Typical settings: alpha=0.1-0.5, T=3-10").  Adapted: a confident linear teacher
``Linear(20, 5)`` (seed 2, weights times 3) under ``no_grad``, a ``Linear(20, 32), Tanh,
Linear(32, 5)`` student, the teacher's argmax as the hard labels, 256 examples, ``kl_div`` with
``batchmean``, Adam at 1e-3.
"""

import copy

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = (
    "https://www.systemoverflow.com/learn/ml-model-optimization/knowledge-distillation/"
    "training-recipe-loss-functions-temperature-and-data-pipelines"
)
DESCRIPTION = "KD soft loss at T = 4 not multiplied by T**2: soft gradient ~1/16 of intended"
ASK = []
MUST = [
    [
        r"T\s?(\*\*\s?2|\^\s?2|²)",
        r"T[- ]squared",
        r"temperature[- ]squared",
        r"square of the temperature",
        r"1 ?/ ?T",
        r"(factor|times|x|×) ?(of )?16\b|\b16 ?(x|×|times)",
    ]
]
MUST_NOT = [
    FALSE_OK,
    CLAIMS_NONFINITE,
    r"\bdead\b",
    r"requires_grad\s*(=|is|was)?\s*False",
    r"not in (the |any )?optimi[sz]er",
]
T, ALPHA = 4.0, 0.5


def teacher():
    torch.manual_seed(2)
    t = nn.Linear(20, 5)
    with torch.no_grad():
        t.weight.mul_(3)
    return t.requires_grad_(False)


def data(t):
    g = torch.Generator().manual_seed(1)
    x = torch.randn(256, 20, generator=g)
    with torch.no_grad():
        t_logits = t(x)
    return x, t_logits, t_logits.argmax(1)


def hard_loss(s_logits, y):
    return F.cross_entropy(s_logits, y)


def soft_loss(s_logits, t_logits):
    return F.kl_div(
        F.log_softmax(s_logits / T, dim=1), F.softmax(t_logits / T, dim=1), reduction="batchmean"
    )


def step(watch, t_squared=False):
    x, t_logits, y = data(teacher())
    torch.manual_seed(0)
    student = nn.Sequential(nn.Linear(20, 32), nn.Tanh(), nn.Linear(32, 5))
    start = copy.deepcopy(student)
    optimizer = torch.optim.Adam(student.parameters(), lr=1e-3)
    factor = T**2 if t_squared else 1.0
    with watch(student) as w:
        optimizer.zero_grad()
        s_logits = student(x)
        loss = ALPHA * hard_loss(s_logits, y) + (1 - ALPHA) * factor * soft_loss(s_logits, t_logits)
        loss.backward()
        grads = {n: p.grad.detach().clone() for n, p in student.named_parameters()}
        optimizer.step()
    # each term's own gradient, on a copy of the starting student
    params = list(start.parameters())
    hard = torch.autograd.grad(hard_loss(start(x), y), params)
    soft = torch.autograd.grad(soft_loss(start(x), t_logits), params)
    names = [n for n, _ in start.named_parameters()]
    return Run(
        w=w,
        grads=grads,
        hard=dict(zip(names, hard, strict=True)),
        soft=dict(zip(names, soft, strict=True)),
    )


def norm(d):
    return float(torch.sqrt(sum(g.pow(2).sum() for g in d.values())))


def check(run, factor):
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
        combined = ALPHA * run.hard[n] + (1 - ALPHA) * factor * run.soft[n]
        assert torch.allclose(g, combined, rtol=1e-4, atol=1e-7), n


def truth(run):
    check(run, 1.0)
    assert norm(run.soft) < norm(run.hard) / 4  # the soft term's share of the step is small
