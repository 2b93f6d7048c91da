"""Control: the same 8 signals, windows and ``Conv1d`` - ``BatchNorm1d`` - tanh regressor, with
the 168 windows built by ``unfold`` into one batch and sent through the net by one forward call, as
the answer in the thread says; the loss is the same sum of per-signal mean squared errors.
BatchNorm normalises with the whole batch's statistics and updates its running statistics once
(``num_batches_tracked`` 1); the gradient is that of the one-batch loss.  Every gradient is finite
and nonzero.

Source: https://github.com/pytorch/pytorch/issues/4741 ("instead, you should use ``tensor.unfold``
... to create a **batch** of 128 windows and activate them through the network **once**").
"""

import torch
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK, Run
from torch import nn

SOURCE = "https://github.com/pytorch/pytorch/issues/4741"
DESCRIPTION = "control: all windows unfolded into one batch, one forward through BatchNorm"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    r"(separate|separately|each|per)[^\n]{0,30}(forward|calls?)",
    r"statistics[^\n]{0,30}(each|per|separate) (call|window|sub-?batch)",
    r"no gradient",
    r"all-zero",
]
GROUPS, LENGTH, WIDTH = 8, 40, 20


def data():
    g = torch.Generator().manual_seed(1)
    levels = 3.0 * torch.randn(GROUPS, 1, generator=g)
    signals = levels + torch.cumsum(0.3 * torch.randn(GROUPS, LENGTH, generator=g), dim=1)
    windows = signals.unfold(1, WIDTH, 1)  # (8, 21, 20)
    targets = windows.mean(-1, keepdim=True)
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
    per = out.reshape(GROUPS, -1, 1)
    return sum(((per[i] - targets[i]) ** 2).mean() for i in range(GROUPS))


def step(watch):
    model = make_model()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    windows, targets = data()
    x = windows.reshape(-1, 1, WIDTH)  # one batch of 168 windows
    with watch(model) as w:
        optimizer.zero_grad()
        loss = group_losses(model(x), targets)
        loss.backward()
        grads = [p.grad.detach().clone() for p in model.parameters()]
        optimizer.step()
    ref = make_model()
    ref_grads = torch.autograd.grad(group_losses(ref(x), targets), list(ref.parameters()))
    return Run(w=w, grads=grads, ref_grads=ref_grads, tracked=int(model.bn.num_batches_tracked))


def truth(run):
    for g in run.grads:
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0)
    assert run.tracked == 1
    for g, r in zip(run.grads, run.ref_grads, strict=True):
        assert torch.allclose(g, r, atol=1e-6)
