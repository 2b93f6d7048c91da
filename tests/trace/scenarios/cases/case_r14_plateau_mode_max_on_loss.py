"""``ReduceLROnPlateau`` fed the validation loss but built with ``mode="max"`` (the mode for an
accuracy).  In ``max`` mode a value counts as an improvement only if it is larger than the best
so far; the validation loss goes down every epoch, so every epoch after the first is a "bad"
epoch and the scheduler divides the learning rate by 10 each time the patience (2) runs out: at
epochs 4, 7 and 10.  The watched step, the 11th epoch's, runs SGD at ``1e-4`` instead of ``0.1``:
the parameters move a thousandth of what they should while the loss is still improving.  Every
gradient is finite and nonzero; nothing raises.

Source: https://hasty.ai/docs/mp-wiki/scheduler/reducelronplateau ("If max is chosen, then the
learning rate is decayed once the monitored quantity stops increasing by a certain minimum
threshold.  If min is chosen, then the learning rate is decayed once the monitored quantity stops
decreasing").  Adapted: a tanh MLP regressor, one training step and one validation loss per epoch.
"""

from itertools import pairwise

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://hasty.ai/docs/mp-wiki/scheduler/reducelronplateau"
DESCRIPTION = "ReduceLROnPlateau(mode='max') on a falling val loss: lr cut 3 times, step at 1e-4"
ASK = []
MUST = [
    [
        r"learning rate",
        r"\blr\b",
    ],
    [
        r"ReduceLROnPlateau",
        r"plateau",
        r"mode",
        r"schedul\w*",
        r"1e-0?4",
        r"0\.0001",
        r"(reduced|decayed|cut|divided)",
        r"too (small|low)",
    ],
]
MUST_NOT = [
    FALSE_OK,
    CLAIMS_NONFINITE,
    r"dead (units?|relu|neurons?)",
    r"no_grad",
    r"not in (the |any )?optimizer",
    r"no gradient",
]
BASE_LR, EPOCHS = 0.1, 10


def step(watch, mode: str = "max"):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(6, 32), nn.Tanh(), nn.Linear(32, 1))
    opt = torch.optim.SGD(model.parameters(), lr=BASE_LR)
    sched = torch.optim.lr_scheduler.ReduceLROnPlateau(opt, mode=mode, factor=0.1, patience=2)
    g = torch.Generator().manual_seed(1)
    w_true = torch.randn(6, 1, generator=g)
    x_tr = torch.randn(128, 6, generator=g)
    x_val = torch.randn(64, 6, generator=g)
    y_tr, y_val = torch.tanh(x_tr @ w_true), torch.tanh(x_val @ w_true)
    val_losses = []
    for _ in range(EPOCHS):  # earlier epochs: one step, then the validation loss to the scheduler
        opt.zero_grad()
        F.mse_loss(model(x_tr), y_tr).backward()
        opt.step()
        with torch.no_grad():
            val_losses.append(F.mse_loss(model(x_val), y_val).item())
        sched.step(val_losses[-1])
    lr = opt.param_groups[0]["lr"]
    before = [p.detach().clone() for p in model.parameters()]
    with watch(model) as w:
        opt.zero_grad()
        loss = F.mse_loss(model(x_tr), y_tr)
        loss.backward()
        grads = [p.grad.detach().clone() for p in model.parameters()]
        opt.step()
    deltas = [p.detach() - b for p, b in zip(model.parameters(), before, strict=True)]
    return Run(w=w, lr=lr, val_losses=val_losses, grads=grads, deltas=deltas)


def truth(run):
    assert all(b < a for a, b in pairwise(run.val_losses))  # always improving
    assert abs(run.lr - BASE_LR * 1e-3) < 1e-12
    for gr, d in zip(run.grads, run.deltas, strict=True):
        assert bool(torch.isfinite(gr).all()) and bool(gr.abs().sum() > 0)
        assert torch.allclose(d, -run.lr * gr, rtol=0.02, atol=1e-7)  # float32 rounding
