"""``CosineAnnealingLR`` built with ``T_max`` counted in epochs (here one epoch) but stepped after
every batch: after the first batch the schedule has already reached its end, ``eta_min = 0``, so
the second batch's optimizer step runs at learning rate 0 and moves no parameter, though its
gradients are finite and nonzero.  (Stepped on, the cosine would climb back to 0.1 at the third
batch: the schedule is periodic past ``T_max``.)

Source: https://wiki.hasty.ai/cosineannealinglr ("T Max is the maximum number of iterations";
"once T_cur = T_max, the learning rate becomes eta_min"; its example steps the scheduler inside
the batch loop, ``for epoch in range(20): for input, target in dataset: ... optimizer.step();
scheduler.step()``, with ``T_max=1000`` counted in iterations).
"""

import torch
from scenario_kit import FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://wiki.hasty.ai/cosineannealinglr"
DESCRIPTION = "CosineAnnealingLR(T_max=1 epoch) stepped per batch: batch 2 at lr 0, nothing moves"
ASK = []
MUST = [
    [
        r"learning rate[^\n]{0,30}\b0(\.0+)?(?!\.?\d)",
        r"\blr[ =:]+0(\.0+)?(?!\.?\d)",
        r"learning rate (of )?zero",
        r"zero learning rate",
        r"did(n't| not) (move|change)",
        r"unchanged",
        r"moved nothing",
    ],
    [r"schedul", r"Cosine", r"T_max", r"per (batch|epoch)", r"every batch"],
]
MUST_NOT = [FALSE_OK, r"\bnan\b|non-?finite", r"no gradient", r"all-zero"]
LR = 0.1


def step(watch, per_batch: bool = True):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 1))
    opt = torch.optim.SGD(model.parameters(), lr=LR)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=1, eta_min=0.0)  # 1 epoch
    g = torch.Generator().manual_seed(1)
    batches = [(torch.randn(16, 4, generator=g), torch.randn(16, 1, generator=g)) for _ in range(2)]
    lrs, moved, grad_norms = [], [], []
    with watch(model) as w:
        for x, y in batches:  # one epoch of two batches
            opt.zero_grad()
            loss = F.mse_loss(model(x), y)
            loss.backward()
            grad_norms.append(sum(p.grad.norm() ** 2 for p in model.parameters()).sqrt().item())
            before = [p.detach().clone() for p in model.parameters()]
            lrs.append(opt.param_groups[0]["lr"])
            opt.step()
            moved.append(
                any(
                    not torch.equal(p.detach(), b)
                    for p, b in zip(model.parameters(), before, strict=True)
                )
            )
            if per_batch:
                sched.step()
        if not per_batch:
            sched.step()
    return Run(w=w, lrs=lrs, moved=moved, grad_norms=grad_norms)


def truth(run):
    assert run.lrs[0] == LR and abs(run.lrs[1]) < 1e-12
    assert run.moved == [True, False]
    assert all(n > 0 for n in run.grad_norms)
