"""A two-task network trained with PCGrad whose per-task gradients are kept as references to
``.grad``, not copies: for each task ``optimizer.zero_grad(set_to_none=False)``, ``loss.backward(
retain_graph=True)``, ``task_grads.append([p.grad for p in params])`` (zeros where ``.grad`` is
None).  ``zero_grad`` with ``set_to_none=False`` zeroes the same ``.grad`` tensors in place and the
next backward accumulates into them, so both entries of ``task_grads`` hold the same trunk and
first-head tensors, with the second task's gradient in the trunk and zero in the first head.  The
surgery sees no conflict (nothing to project) and writes the sum into ``.grad``: twice the second
task's trunk gradient, the second head's own gradient, and exactly zero for the first head: the
first task is dropped, although the two tasks' real gradients conflict (cosine -0.07).  Nothing
raises; every gradient is finite.

Source: https://junaidaliop.github.io/zij/math/pcgrad/ ("PCGrad detects a conflict between tasks i
and j whenever g_i · g_j < 0 (negative cosine similarity) and removes the conflicting component of
g_i by projecting it onto the plane normal to g_j. Each task gradient is altered in turn against the
other tasks in random order; the deconflicted gradients are then summed and handed to a standard
optimizer (SGD, Adam, etc.) for the parameter update").  Adapted: a shared trunk ``Linear(8, 32),
Tanh, Linear(32, 32), Tanh`` with one ``Linear(32, 1)`` head per task, two regression tasks whose
targets pull the trunk apart, the surgery over all parameters flattened (two tasks: one fixed
order), Adam at 1e-3.
"""

import copy
import math

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://junaidaliop.github.io/zij/math/pcgrad/"
DESCRIPTION = "PCGrad task grads stored as p.grad references (no clone): both = task 2's grad"
ASK = ["heads.0.weight"]
MUST = [
    [r"clone\w*|cop(y|ies|ied)", r"alias\w*|same tensors?|references? to (the )?\.?grad"],
    [
        r"zero_grad",
        r"set_to_none",
        r"in[- ]place",
        r"first task|task 1|task_grads\[0\]",
        r"overwr\w*|accumulat\w*",
    ],
]
MUST_NOT = [FALSE_OK, CLAIMS_NONFINITE, r"\bdead\b", r"requires_grad\s*(=|is|was)?\s*False"]


class MultiTask(nn.Module):
    def __init__(self):
        super().__init__()
        self.trunk = nn.Sequential(nn.Linear(8, 32), nn.Tanh(), nn.Linear(32, 32), nn.Tanh())
        self.heads = nn.ModuleList([nn.Linear(32, 1), nn.Linear(32, 1)])

    def forward(self, x):
        h = self.trunk(x)
        return [head(h).squeeze(-1) for head in self.heads]


def data():
    g = torch.Generator().manual_seed(1)
    x = torch.randn(64, 8, generator=g)
    y1 = x[:, :4].sum(-1)
    return x, (y1, -y1 + x[:, 4])


def retrieve(params, cloned):  # a parameter the task does not reach counts as zero
    if cloned:
        return [torch.zeros_like(p) if p.grad is None else p.grad.detach().clone() for p in params]
    return [torch.zeros_like(p) if p.grad is None else p.grad for p in params]


def pcgrad(grads):
    flat = [torch.cat([g.flatten() for g in task]) for task in grads]
    merged = []
    for i, g_i in enumerate(flat):
        g_pc = g_i.clone()
        for j, g_j in enumerate(flat):
            if i != j and float(g_pc @ g_j) < 0:
                g_pc = g_pc - (g_pc @ g_j) / (g_j @ g_j) * g_j
        merged.append(g_pc)
    total = sum(merged)
    shapes = [g.shape for g in grads[0]]
    return list(torch.split(total, [math.prod(s) for s in shapes])), shapes


def step(watch, cloned=False):
    torch.manual_seed(0)
    model = MultiTask()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    params = list(model.parameters())
    x, targets = data()
    reference = copy.deepcopy(model)  # each task's own gradient, with torch alone
    ref_losses = [F.mse_loss(o, y) for o, y in zip(reference(x), targets, strict=True)]
    own = [
        torch.autograd.grad(
            loss, list(reference.parameters()), allow_unused=True, retain_graph=True
        )
        for loss in ref_losses
    ]
    own = [
        [torch.zeros_like(p) if g is None else g for g, p in zip(task, params, strict=True)]
        for task in own
    ]
    with watch(model) as w:
        losses = [F.mse_loss(o, y) for o, y in zip(model(x), targets, strict=True)]
        task_grads = []
        for loss in losses:
            optimizer.zero_grad(set_to_none=False)
            loss.backward(retain_graph=True)
            task_grads.append(retrieve(params, cloned))
        merged, shapes = pcgrad(task_grads)
        for p, g, s in zip(params, merged, shapes, strict=True):
            p.grad = g.view(s)
        stepped = {n: p.grad.detach().clone() for n, p in model.named_parameters()}
        optimizer.step()
    return Run(
        w=w, task_grads=task_grads, own=own, stepped=stepped,
        names=[n for n, _ in model.named_parameters()], losses=[float(v.detach()) for v in losses],
    )  # fmt: skip


def cosine(a, b):
    a, b = torch.cat([g.flatten() for g in a]), torch.cat([g.flatten() for g in b])
    return float(a @ b / (a.norm() * b.norm()))


def truth(run):
    assert all(math.isfinite(v) for v in run.losses)
    assert cosine(*run.own) < -0.03  # the tasks' own gradients conflict
    first, second = run.task_grads
    for n, a, b, g, own in zip(
        run.names, first, second, run.stepped.values(), run.own[1], strict=True
    ):
        assert bool(torch.isfinite(g).all()), n
        if n.startswith("heads.1."):  # task 2's head: task 1 gave it a fresh zero tensor
            assert a is not b and torch.allclose(g, own, rtol=1e-4, atol=1e-7), n
        else:  # the same tensors in both entries
            assert a is b and torch.allclose(g, 2 * own, rtol=1e-4, atol=1e-7), n
    assert bool(run.stepped["heads.0.weight"].abs().sum() == 0)  # task 1's head gets nothing
    assert bool(run.stepped["trunk.0.weight"].abs().sum() > 0)
