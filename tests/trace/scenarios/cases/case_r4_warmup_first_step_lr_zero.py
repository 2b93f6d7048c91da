"""Linear warmup with ``LambdaLR`` and ``warmup_lambda(step) = step / warmup_steps``: the factor
at step 0 is 0, so the first batch is trained at learning rate 0.  Its gradients are finite and
nonzero; the optimizer step leaves every parameter exactly where it was.

Source: https://leyaa.ai/codefly/learn/pytorch/part-2/pytorch-warmup-strategies ("def
warmup_lambda(current_step): if current_step < warmup_steps: return float(current_step) /
float(max(1, warmup_steps))"; "During warmup steps, the multiplier grows from 0 to 1"; "The
learning rate starts at 0 and grows to 0.1 gradually").
"""

import torch
from scenario_kit import FALSE_OK, Run
from torch import nn
from torch.optim.lr_scheduler import LambdaLR

SOURCE = "https://leyaa.ai/codefly/learn/pytorch/part-2/pytorch-warmup-strategies"
DESCRIPTION = "LambdaLR warmup factor step/5: the first step runs at lr 0 and moves nothing"
ASK = []
MUST = [
    [
        r"did(n't| not) (move|change)",
        r"unchanged",
        r"not (moved|changed|updated)",
        r"no (visible )?(effect|change)",
        r"nothing",
    ],
    [r"learning rate", r"\blr\b", r"schedul", r"warm-?up"],
]
MUST_NOT = [FALSE_OK, r"\bnan\b|non-?finite", r"no gradient", r"all-zero"]


def step(watch):
    torch.manual_seed(0)
    model = nn.Linear(10, 1)
    base_lr, warmup_steps = 0.1, 5

    def warmup_lambda(step):
        if step < warmup_steps:
            return float(step) / float(max(1, warmup_steps))
        return 1.0

    optimizer = torch.optim.SGD(model.parameters(), lr=base_lr)
    scheduler = LambdaLR(optimizer, lr_lambda=warmup_lambda)
    criterion = nn.MSELoss()
    g = torch.Generator().manual_seed(1)
    inputs, targets = torch.randn(10, 10, generator=g), torch.randn(10, 1, generator=g)
    before = [p.detach().clone() for p in model.parameters()]
    with watch(model) as w:
        optimizer.zero_grad()
        outputs = model(inputs)
        loss = criterion(outputs, targets)
        loss.backward()
        lr = optimizer.param_groups[0]["lr"]
        optimizer.step()
        scheduler.step()
    return Run(w=w, model=model, before=before, lr=lr)


def truth(run):
    assert run.lr == 0.0
    for p, b in zip(run.model.parameters(), run.before, strict=True):
        assert p.grad is not None and bool(p.grad.abs().sum() > 0)
        assert torch.equal(p.detach(), b)
