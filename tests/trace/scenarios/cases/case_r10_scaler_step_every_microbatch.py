"""A "gradient accumulation" loop with a ``GradScaler`` that zeroes the gradients once, then for each
micro-batch runs ``scaler.scale(loss).backward()``, ``scaler.step(optimizer)``,
``scaler.update()``: it steps on every micro-batch and never zeroes between them.  The second
step reads the second micro-batch's gradient plus what the first left in ``.grad`` (already
unscaled by the first ``scaler.step``, so divided by the scale a second time): neither an
accumulation nor two clean steps.  ``torch.amp.GradScaler("cpu")`` on a small MLP.

Source: https://kaggle.curtischong.me/ml-concepts/gradient-accumulation ("simulate a larger batch
size by accumulating gradients"; its loop: ``optimizer.zero_grad()``, then per micro-batch
``scaler.scale(loss).backward()``, ``scaler.step(optimizer)``, ``scaler.update()``).
"""

import copy

import torch
from scenario_kit import FALSE_OK, Run
from torch import nn

SOURCE = "https://kaggle.curtischong.me/ml-concepts/gradient-accumulation"
DESCRIPTION = (
    "GradScaler loop: zero_grad once, scaler.step after every micro-batch: .grad carries over"
)
ASK = []
MUST = [
    [
        r"zero_grad|not (been )?(zeroed|reset|cleared)|accumulat|sum of (2|two)|(2|two) backward",
    ]
]
MUST_NOT = [FALSE_OK]

K = 2


def _fresh_grads(model, x, y):
    m = copy.deepcopy(model)
    loss = nn.functional.mse_loss(m(x), y)
    return [g.detach() for g in torch.autograd.grad(loss, list(m.parameters()))]


def step(watch, accumulate: bool = False):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 16), nn.Tanh(), nn.Linear(16, 1))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    scaler = torch.amp.GradScaler("cpu")
    g = torch.Generator().manual_seed(1)
    micro = [(torch.randn(16, 8, generator=g), torch.randn(16, 1, generator=g)) for _ in range(K)]
    read, fresh = [], []
    hook = optimizer.register_step_pre_hook(
        lambda opt, args, kwargs: read.append([p.grad.detach().clone() for p in model.parameters()])
    )
    with watch(model) as w:
        optimizer.zero_grad()
        for x, y in micro:
            fresh.append(_fresh_grads(model, x, y))
            loss = nn.functional.mse_loss(model(x), y)
            if accumulate:
                scaler.scale(loss / K).backward()
            else:
                scaler.scale(loss).backward()
                scaler.step(optimizer)
                scaler.update()
        if accumulate:
            scaler.step(optimizer)
            scaler.update()
    hook.remove()
    return Run(w=w, read=read, fresh=fresh)


def truth(run):
    assert len(run.read) == K  # a step per micro-batch
    second, own = run.read[1], run.fresh[1]
    # the second step did not read the second micro-batch's gradient alone
    assert any(
        not torch.allclose(r, f, rtol=1e-4, atol=1e-7) for r, f in zip(second, own, strict=True)
    )
