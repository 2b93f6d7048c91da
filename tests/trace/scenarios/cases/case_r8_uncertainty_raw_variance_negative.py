"""Multi-task uncertainty weighting (Kendall et al.) with the task variances learned directly:
two regression heads on a shared trunk, the total loss ``sum(L_i / (2 sigma2_i) + log(sigma2_i) /
2)`` with ``sigma2 = nn.Parameter(torch.ones(2))`` in the model and the same SGD optimizer.  Both
task losses become small, the gradient of ``sigma2`` is ``(1 - L_i / sigma2_i) / (2 sigma2_i)``,
positive, and the third step takes both variances below zero: in the fourth step
``log(sigma2)`` is NaN and so is the loss, while every gradient stays finite (the derivative of
``log`` is ``1 / x``), and ``L_i / (2 sigma2_i)`` with a negative variance now pushes each task's
loss *up*.

Source: https://gh1.taotu78.com/99731/M2GRL/issues/2 (a copy of the M2GRL issue: the paper says
"For numerical stability, we trained the network to predict log sigma^2", quoting Kendall et al.
"it is more numerically stable than regressing the variance, sigma^2, as the loss avoids any
division by zero"; "但是从代码看,似乎还是直接优化的 sigma^2 ,优化过程不会出现除零错误么?" - the code
still optimises sigma^2 directly).  The step: iterations 0-1 before the watch, 2-3 inside it.
"""

import math

import torch
from scenario_kit import FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://gh1.taotu78.com/99731/M2GRL/issues/2"
DESCRIPTION = "uncertainty weights as raw sigma^2: a step takes it below 0, log(sigma^2) NaN loss"
ASK = []
MUST = [
    [r"\bnan\b", r"non-?finite"],
    [r"\blog\b", r"LogBackward", r"negative", r"sigma2"],
]
MUST_NOT = [
    FALSE_OK,
    r"non-?finite gradient",
    r"nan gradient",
    r"gradients?[^\n]{0,20}(is|are|was|were|became) nan",
]


class Net(nn.Module):
    def __init__(self, raw: bool):
        super().__init__()
        self.trunk = nn.Sequential(nn.Linear(4, 16), nn.Tanh())
        self.head_a = nn.Linear(16, 1)
        self.head_b = nn.Linear(16, 1)
        self.raw = raw
        if raw:
            self.sigma2 = nn.Parameter(torch.ones(2))  # the variances themselves
        else:
            self.log_var = nn.Parameter(torch.zeros(2))  # s = log sigma^2, as the paper says

    def forward(self, x):
        h = self.trunk(x)
        return self.head_a(h), self.head_b(h)

    def weigh(self, la, lb):
        task = torch.stack([la, lb])
        if self.raw:
            return (task / (2 * self.sigma2) + 0.5 * torch.log(self.sigma2)).sum()
        return (0.5 * torch.exp(-self.log_var) * task + 0.5 * self.log_var).sum()


def step(watch, raw: bool = True):
    torch.manual_seed(0)
    model = Net(raw)
    g = torch.Generator().manual_seed(1)
    x = torch.randn(32, 4, generator=g)
    ya, yb = 0.1 * torch.randn(32, 1, generator=g), 0.1 * torch.randn(32, 1, generator=g)
    opt = torch.optim.SGD(model.parameters(), lr=0.5)

    def iteration():
        opt.zero_grad()
        pa, pb = model(x)
        la, lb = F.mse_loss(pa, ya), F.mse_loss(pb, yb)
        loss = model.weigh(la, lb)
        loss.backward()
        grads = {n: p.grad.clone() for n, p in model.named_parameters()}
        opt.step()
        return loss.item(), (la.item(), lb.item()), grads

    for _ in range(2):
        iteration()
    with watch(model) as w:
        iteration()
        weights_before = (model.sigma2 if raw else model.log_var).detach().clone()
        loss, tasks, grads = iteration()
    return Run(w=w, model=model, loss=loss, tasks=tasks, grads=grads, before=weights_before)


def truth(run):
    assert bool((run.before < 0).all())  # both variances negative going into the last step
    assert math.isnan(run.loss)  # log of a negative variance
    assert all(math.isfinite(t) and t < 0.05 for t in run.tasks)  # the task losses are finite
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()), n  # every gradient finite
    # with sigma2 < 0 the task term L / (2 sigma2) is maximised: its gradient on sigma2 is
    # -L / (2 sigma2^2) + 1 / (2 sigma2), negative, and the heads climb their own loss
    assert bool((run.grads["sigma2"] < 0).all())
