"""L-BFGS with a closure that computes the loss and calls ``backward()`` but never
``optimizer.zero_grad()``: L-BFGS evaluates the closure several times in one ``step`` (here 5),
and each evaluation adds its gradient to ``.grad``.  The optimizer reads the sum of the gradients
at five different points instead of the gradient at the current one.

Source: https://runebook.dev/ru/docs/pytorch/generated/torch.optim.lbfgs/torch.optim.LBFGS.step
("Если забыть передать closure или не обнулить в нём градиенты, модель просто не будет учиться или
выдаст ошибку"; "Отсутствие zero_grad() внутри шага. Это самая частая ошибка": forgetting to
zero the gradients inside the closure is the most frequent mistake).
"""

import torch
from scenario_kit import FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://runebook.dev/ru/docs/pytorch/generated/torch.optim.lbfgs/torch.optim.LBFGS.step"
DESCRIPTION = "LBFGS closure without zero_grad: .grad sums the 5 evaluations of one step"
ASK = []
MUST = [
    [
        r"zero_grad",
        r"accumulat",
        r"(sum|sums|summed)[^\n]{0,40}(\d+|several|multiple|five) (backward )?(passes|evaluations|calls)",
        r"(not|never) (zeroed|reset|cleared)",
    ]
]
MUST_NOT = [FALSE_OK]


def step(watch, zero=False):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 8), nn.Tanh(), nn.Linear(8, 1))
    optimizer = torch.optim.LBFGS(model.parameters(), lr=1, max_iter=5)
    g = torch.Generator().manual_seed(1)
    x, y = torch.randn(32, 3, generator=g), torch.randn(32, 1, generator=g)
    evaluations = []

    def closure():
        if zero:
            optimizer.zero_grad()
        loss = F.mse_loss(model(x), y)
        loss.backward()
        params = [p.detach().clone() for p in model.parameters()]
        evaluations.append(params)
        return loss

    with watch(model) as w:
        optimizer.step(closure)
    final_grad = [p.grad.clone() for p in model.parameters()]
    return Run(w=w, model=model, evaluations=evaluations, final_grad=final_grad, x=x, y=y)


def grad_at(params, x, y):
    model = nn.Sequential(nn.Linear(3, 8), nn.Tanh(), nn.Linear(8, 1))
    with torch.no_grad():
        for p, v in zip(model.parameters(), params, strict=True):
            p.copy_(v)
    F.mse_loss(model(x), y).backward()
    return [p.grad for p in model.parameters()]


def truth(run):
    assert len(run.evaluations) == 5
    total = [
        sum(gs) for gs in zip(*(grad_at(e, run.x, run.y) for e in run.evaluations), strict=True)
    ]
    last = grad_at(run.evaluations[-1], run.x, run.y)
    for have, s, one in zip(run.final_grad, total, last, strict=True):
        assert torch.allclose(have, s, atol=1e-5)  # .grad holds the sum of all 5 evaluations
        assert not torch.allclose(have, one, atol=1e-5)  # not the last one's gradient
