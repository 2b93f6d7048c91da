"""Control: loss-based curriculum weighting with the weights treated as constants. Each example's
weight ``w_i = exp(-l_i / tau)`` is computed from the detached per-example loss, so the loss
``mean(w_i * l_i)`` is an ordinary weighted empirical risk: the coefficient of every example's
gradient is ``w_i / n > 0``, hard examples are down-weighted, never ascended. Every gradient is
finite and nonzero; nothing raises.

Source: https://theorempath.com/topics/curriculum-learning ("let w(x, t) >= 0 be a weighting
function over examples x at step t. The curriculum defines a weighted empirical risk"; "A curriculum
schedules w(x_i, t) so that easy examples have higher weight early in training"; "Loss-based: d(x_i)
= l(h_0(x_i), y_i) where h_0 is an initial or pretrained model"). Adapted: a tanh MLP classifier on
3 synthetic classes, ``tau = 1``, SGD, the weights from the detached loss.
"""

import torch
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://theorempath.com/topics/curriculum-learning"
DESCRIPTION = "control: curriculum weights exp(-loss/tau) from the detached loss"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [CLAIMS_NONFINITE, CLAIMS_ERROR, r"(not|never) detached", r"ascen\w*"]
TAU = 1.0


def data():
    g = torch.Generator().manual_seed(1)
    x = torch.randn(64, 10, generator=g)
    y = (x[:, :3].argmax(1) + (torch.rand(64, generator=g) < 0.2).long()) % 3
    return x, y


def make_model():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(10, 32), nn.Tanh(), nn.Linear(32, 3))


def step(watch):
    model = make_model()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = data()
    with watch(model) as w:
        optimizer.zero_grad()
        per_example = F.cross_entropy(model(x), y, reduction="none")
        weights = torch.exp(-per_example.detach() / TAU)
        loss = (weights * per_example).mean()
        loss.backward()
        grads = [p.grad.detach().clone() for p in model.parameters()]
        optimizer.step()
    return Run(w=w, per_example=per_example.detach(), grads=grads, x=x, y=y)


def truth(run):
    fixed = torch.exp(-run.per_example / TAU) / len(run.per_example)
    model = make_model()
    per_example = F.cross_entropy(model(run.x), run.y, reduction="none")
    expect = torch.autograd.grad((fixed * per_example).sum(), list(model.parameters()))
    for g, e in zip(run.grads, expect, strict=True):
        assert torch.allclose(g, e, atol=1e-6)  # weights held constant
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0)
    assert int((run.per_example > TAU).sum()) >= 10  # hard examples present, down-weighted
