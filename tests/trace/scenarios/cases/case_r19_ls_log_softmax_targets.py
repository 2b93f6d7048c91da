"""Control: the label-smoothed cross-entropy written by hand as the page gives it, the smoothed
target ``(1 - a) * one_hot(y) + a / K`` against ``F.log_softmax``: ``loss = -(target *
log_softmax(z)).sum(-1).mean()``. It is the same loss as ``F.cross_entropy(z, y,
label_smoothing=a)`` (asserted), positive, and every parameter gets a finite, nonzero gradient.

Source: https://crackedaicode.com/problems/flax-label-smoothing ("target_n = (1 - α) * one_hot(y_n,
K) + α / K", "loss_n = -sum_k target_{n,k} * log_softmax(Z_n)_k"; "this is exactly cross-entropy
with a smoothed target"). Adapted: the page's formula in PyTorch on a tanh MLP with 4 classes, a
0.1, SGD at 0.1.
"""

import torch
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://crackedaicode.com/problems/flax-label-smoothing"
DESCRIPTION = "control: label smoothing by hand with log_softmax, equal to the built-in"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [CLAIMS_NONFINITE, CLAIMS_ERROR, r"negative loss", r"loss[^\n]{0,20} negative"]
ALPHA, K = 0.1, 4


def label_smoothing_loss(logits, y, alpha=ALPHA):
    target = (1 - alpha) * F.one_hot(y, K) + alpha / K
    return -(target * F.log_softmax(logits, dim=-1)).sum(-1).mean()


def make_model():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(10, 32), nn.Tanh(), nn.Linear(32, K))


def data():
    g = torch.Generator().manual_seed(1)
    x = torch.randn(64, 10, generator=g)
    return x, (x[:, 0] > 0).long() * 2 + (x[:, 1] > 0).long()


def step(watch):
    model = make_model()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = data()
    with watch(model) as w:
        optimizer.zero_grad()
        loss = label_smoothing_loss(model(x), y)
        loss.backward()
        grads = [p.grad.detach().clone() for p in model.parameters()]
        optimizer.step()
    return Run(w=w, x=x, y=y, loss=loss.item(), grads=grads)


def truth(run):
    model = make_model()
    smoothed_ce = F.cross_entropy(model(run.x), run.y, label_smoothing=ALPHA)
    ce_grads = torch.autograd.grad(smoothed_ce, list(model.parameters()))
    assert run.loss > 0.0
    assert abs(run.loss - smoothed_ce.item()) < 1e-5  # the built-in loss
    for g, c in zip(run.grads, ce_grads, strict=True):
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0)
        assert torch.allclose(g, c, atol=1e-6)
