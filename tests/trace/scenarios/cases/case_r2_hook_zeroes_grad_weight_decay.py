"""Every parameter carries a hook that returns a zero gradient (meant to stop learning), but the
optimizer has weight decay: the optimizer reads all-zero gradients and still moves every
parameter (p <- p - lr * wd * p).

Source: https://github.com/pytorch/pytorch/issues/38581 ("Weight_decay in SGD doesn't respect
hooks": "If you set a hook that returns grads of just 0 you expect the weights to not be updated.
However using SGD if you set weight decay to a non-zero value ... the weight values will still
change").
"""

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://github.com/pytorch/pytorch/issues/38581"
DESCRIPTION = "hooks return zero grads for every parameter; SGD weight_decay still moves them"
ASK = ["0.weight"]
MUST = [
    [r"\bzero", r"all-zero"],
    [r"hook", r"weight.decay", r"\bdecay", r"\bmoved\b", r"\bchang", r"\bstill\b"],
]
MUST_NOT = [
    FALSE_OK,
    CLAIMS_NONFINITE,
    r"dead (relu|unit)",
    r"0\.weight[^\n]*(did not|does not|didn't|will not|won't) (move|change)",
]


def _net():
    return nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 2))


def step(watch):
    torch.manual_seed(0)
    model = _net()
    for p in model.parameters():
        p.register_hook(lambda g: torch.zeros_like(g))  # "train nothing" by hooks
    opt = torch.optim.SGD(model.parameters(), lr=0.5, momentum=0.0, weight_decay=1.0)
    x, y = torch.rand(2, 3), torch.rand(2, 2)
    before = [p.detach().clone() for p in model.parameters()]
    with watch(model) as w:
        opt.zero_grad()
        loss = F.mse_loss(model(x), y)
        loss.backward()
        grads = [p.grad.clone() for p in model.parameters()]
        opt.step()
    return Run(w=w, model=model, before=before, grads=grads, lr=0.5)


def truth(run):
    for p, b, g in zip(run.model.parameters(), run.before, run.grads, strict=True):
        assert bool((g == 0).all())  # the optimizer read an all-zero gradient
        assert torch.allclose(p.detach(), b * (1 - run.lr * 1.0))  # decay alone moved it
        assert not torch.equal(p.detach(), b)
