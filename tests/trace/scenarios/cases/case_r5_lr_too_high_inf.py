"""A small regressor on unnormalised inputs (features about 10) trained with SGD at learning
rate 10: the first step overshoots, the loss grows by orders of magnitude at each step, and at
the third step it overflows to inf and the gradients hold inf/NaN.  Nothing in the model is
wrong; the step size is.

Source: https://discuss.pytorch.org/t/tricks-for-being-able-to-use-a-higher-learning-rate/142179
("I am currently training a model where the loss explodes if I use a higher learning rate ...
The loss even goes to NaN after the first iteration, which was a bit surprising to me").
"""

import torch
from scenario_kit import FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://discuss.pytorch.org/t/tricks-for-being-able-to-use-a-higher-learning-rate/142179"
DESCRIPTION = "SGD lr=10 on inputs ~10: loss 1e3, 1e14, inf in three steps"
ASK = []
MUST = [
    [r"\bnan\b", r"non-?finite", r"\binf\b", r"infinit", r"overflow"],
    [
        r"learning rate",
        r"\blr\b",
        r"step size",
        r"diverg",
        r"explod",
        r"(update|step)s?[^\n]{0,40}(too (large|big)|huge|overshoot)",
        r"(grew|grows|growing|increas)\w*[^\n]{0,40}(step|iteration|update)",
    ],
]
MUST_NOT = [FALSE_OK]


def step(watch, lr=10.0):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 1))
    opt = torch.optim.SGD(model.parameters(), lr=lr)
    g = torch.Generator().manual_seed(1)
    x = torch.randn(32, 4, generator=g) * 10
    y = x @ torch.tensor([[1.0], [2.0], [-1.0], [3.0]])
    losses, finite = [], []
    with watch(model) as w:
        for _ in range(3):
            opt.zero_grad()
            loss = F.mse_loss(model(x), y)
            loss.backward()
            losses.append(loss.item())
            finite.append(all(bool(torch.isfinite(p.grad).all()) for p in model.parameters()))
            opt.step()
    return Run(w=w, model=model, losses=losses, finite=finite, lr=lr)


def truth(run):
    assert run.lr == 10.0
    assert all(torch.isfinite(torch.tensor(run.losses[:2])))  # finite, then ...
    assert run.losses[1] > 1e6 * run.losses[0]  # ... growing by orders of magnitude ...
    assert not torch.isfinite(torch.tensor(run.losses[2]))  # ... and inf at the third step
    assert run.finite[:2] == [True, True] and run.finite[2] is False
