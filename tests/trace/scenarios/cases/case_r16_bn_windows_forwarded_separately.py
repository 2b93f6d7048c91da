"""Sliding windows cut from 8 long signals, each signal's 21 windows sent through a BatchNorm
model by their own forward call, the 8 losses summed and one ``backward()``.  In training mode
``BatchNorm1d`` normalises every call with that call's own mean and variance, so each signal's
windows are centred on themselves (the level that tells the signals apart is removed within each
call), the gradient is not that of the same 168 windows in one batch, and the running statistics
are updated 8 times in one step (``num_batches_tracked`` 8) from 8 narrow per-signal batches (the
convolution's output varies within one signal less than half as much as over the whole batch),
so the model in ``eval()`` sees other statistics than it trained with.  Every gradient is finite
and nonzero; nothing raises.

Source: https://github.com/pytorch/pytorch/issues/4741 ("I originally have a 128 x 1 x 360
window. I loop through each of the 128 windows and create 180 windows of width 180 ... I run each
180x1x180 window (of the 128) through the net and sum the losses over all 128, before calling a
backward pass"; the answer: "Batch norm (and its backward) is **not** linear in batch size. I.e.,
``f(x) + f(y) != f([x, y]).sum()``").  Adapted: 8 random walks of length 40, windows of width 20,
a ``Conv1d`` - ``BatchNorm1d`` - tanh model regressing each window's mean level.
"""

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn

SOURCE = "https://github.com/pytorch/pytorch/issues/4741"
DESCRIPTION = (
    "8 groups of windows each forwarded alone through BatchNorm, losses summed: per-call stats"
)
ASK = []
MUST = [
    [r"batch.?norm|\bBN\b|running (mean|var)"],
    [
        r"\b(8|eight) (separate )?(forward|calls?|passes|batches|sub-?batches)",
        (
            r"(separate|separately|each|per|one at a time|individual)[^\n]{0,40}"
            r"(forward|window|sub-?batch|calls?|groups?|signals?|chunks?)"
        ),
        r"statistics[^\n]{0,40}(each|per|separate|sub-?batch|window|call)",
        r"num_batches_tracked",
        r"(not linear|nonlinear) in (the )?batch",
        r"unfold|single batch|one batch|concatenat\w*",
        r"(updated|tracked)[^\n]{0,20}\b(8|eight) times",
    ],
]
MUST_NOT = [FALSE_OK, CLAIMS_NONFINITE]
GROUPS, LENGTH, WIDTH = 8, 40, 20


def data():
    g = torch.Generator().manual_seed(1)
    levels = 3.0 * torch.randn(GROUPS, 1, generator=g)
    signals = levels + torch.cumsum(0.3 * torch.randn(GROUPS, LENGTH, generator=g), dim=1)
    windows = signals.unfold(1, WIDTH, 1)  # (8, 21, 20)
    targets = windows.mean(-1, keepdim=True)  # each window's level
    return windows, targets


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv1d(1, 8, 5)
        self.bn = nn.BatchNorm1d(8)
        self.head = nn.Linear(8, 1)

    def forward(self, x):
        h = torch.tanh(self.bn(self.conv(x)))
        return self.head(h.mean(-1))


def make_model():
    torch.manual_seed(0)
    return Net()


def group_losses(out, targets):
    """The loss as the thread writes it: one mean squared error per signal, summed."""
    per = out.reshape(GROUPS, -1, 1)
    return sum(((per[i] - targets[i]) ** 2).mean() for i in range(GROUPS))


def reference(windows, targets):
    """Gradients of the same loss with the 168 windows in one batch, and the batch variance of
    the convolution's output that BatchNorm sees then."""
    model = make_model()
    x = windows.reshape(-1, 1, WIDTH)
    loss = group_losses(model(x), targets)
    grads = torch.autograd.grad(loss, list(model.parameters()))
    with torch.no_grad():
        var = model.conv(x).var(dim=(0, 2))
        per_call = torch.stack(
            [model.conv(windows[i].unsqueeze(1)).var(dim=(0, 2)) for i in range(GROUPS)]
        ).mean(0)
    return grads, var, per_call


def step(watch):
    model = make_model()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    windows, targets = data()
    with watch(model) as w:
        optimizer.zero_grad()
        total = 0.0
        for i in range(GROUPS):  # each signal's windows through the net on their own
            out = model(windows[i].unsqueeze(1))
            total = total + ((out - targets[i]) ** 2).mean()
        total.backward()
        grads = [p.grad.detach().clone() for p in model.parameters()]
        optimizer.step()
    ref_grads, batch_var, per_call_var = reference(windows, targets)
    return Run(
        w=w,
        grads=grads,
        ref_grads=ref_grads,
        tracked=int(model.bn.num_batches_tracked),
        batch_var=batch_var,
        per_call_var=per_call_var,
    )


def truth(run):
    for g in run.grads:
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0)
    assert run.tracked == GROUPS  # 8 forwards in training mode, 8 updates of the statistics
    diff = sum(float((g - r).norm()) for g, r in zip(run.grads, run.ref_grads, strict=True))
    size = sum(float(r.norm()) for r in run.ref_grads)
    assert diff > 0.1 * size  # not the gradient of the same windows in one batch
    # each call normalises with its own signal's narrow variance, not the whole batch's
    assert float(run.per_call_var.mean()) < 0.5 * float(run.batch_var.mean())
