"""Control: the same regressor and negative targets with a linear output unit (no activation after
the last ``Linear``), as the answer recommends. After the same 30 SGD steps the predictions are
negative, close to the targets, and the watched step gives every parameter a finite, nonzero
gradient and moves it.

Source:
https://community.deeplearning.ai/t/can-relu-activation-be-used-in-the-last-layer-of-a-neural-network/549422
("I am using 'linear' activation in the output layer of a neural network, and It predicts negative
values ... Now, I was wondering if I could use 'relu' in the output layer instead of 'linear'"; "No,
do not use ReLU in the output layer"). Adapted: ``Linear(6, 16)``, ``Tanh``, ``Linear(16, 1)``,
targets ``-1 - 0.5 |x . v|``, 30 SGD steps at 0.1 before the watched one.
"""

import torch
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = (
    "https://community.deeplearning.ai/t/"
    "can-relu-activation-be-used-in-the-last-layer-of-a-neural-network/549422"
)
DESCRIPTION = "control: linear output unit for negative regression targets: trains"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [CLAIMS_NONFINITE, CLAIMS_ERROR, r"\bdead\b", r"all[- ]zero"]
PRE_STEPS = 30


def make_model():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(6, 16), nn.Tanh(), nn.Linear(16, 1))


def data():
    g = torch.Generator().manual_seed(1)
    x = torch.randn(64, 6, generator=g)
    v = torch.randn(6, generator=g)
    return x, (-1 - 0.5 * (x @ v).abs()).unsqueeze(1)  # every target below -1


def step(watch):
    model = make_model()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = data()
    for _ in range(PRE_STEPS):  # the training so far
        optimizer.zero_grad()
        F.mse_loss(model(x), y).backward()
        optimizer.step()
    before = [p.detach().clone() for p in model.parameters()]
    with watch(model) as w:
        optimizer.zero_grad()
        pred = model(x)
        loss = F.mse_loss(pred, y)
        loss.backward()
        grads = [p.grad.detach().clone() for p in model.parameters()]
        optimizer.step()
    with torch.no_grad():
        pre = model[:3](x)
    return Run(w=w, model=model, x=x, y=y, pred=pred.detach(), pre=pre, loss=loss.item(),
               grads=grads, before=before)  # fmt: skip


def truth(run):
    assert not isinstance(run.model[-1], nn.ReLU)
    assert float((run.pred < 0).float().mean()) > 0.9  # negative predictions, as the targets
    assert run.loss < float((run.y**2).mean())  # better than predicting 0
    for g, b, p in zip(run.grads, run.before, run.model.parameters(), strict=True):
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0)
        assert not torch.equal(p.detach(), b)
