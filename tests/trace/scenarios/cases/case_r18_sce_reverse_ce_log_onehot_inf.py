"""Symmetric cross entropy (SL) for noisy labels written with the reverse cross entropy taken
literally, ``RCE = -sum_k p_k * log(q_k)`` with ``q`` the one-hot label: ``log`` of the label's zeros
is -inf, each ``p_k * -inf`` is -inf, and the RCE of every example is +inf. The loss is inf; its
derivative with respect to the predicted probabilities is ``-log q_k = +inf``, and the softmax's
backward turns it into ``inf - inf = NaN``: every parameter's gradient is NaN and the step writes
NaN into every weight. The paper avoids this by truncating ``log 0`` to a constant A.

Source: https://ar5iv.labs.arxiv.org/html/1908.06112 ("Symmetric Cross Entropy for Robust Learning
with Noisy Labels": "we propose the approach of Symmetric cross entropy Learning (SL), boosting CE
symmetrically with a noise robust counterpart Reverse Cross Entropy (RCE)"; RCE swaps the roles of
the prediction and the label distribution, whose zeros need ``log 0`` defined as a constant).
Adapted: a tanh MLP classifier of 4 synthetic classes with 30% of the labels flipped, ``alpha =
0.1``, ``beta = 1``, the prediction clamped to [1e-7, 1] as the authors' code does, the one-hot
label not clamped.
"""

import torch
from scenario_kit import FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://ar5iv.labs.arxiv.org/html/1908.06112"
DESCRIPTION = "symmetric CE: reverse CE takes log of the one-hot label's zeros, inf loss, NaN grad"
ASK = []
MUST = [
    [r"\bnan\b", r"non-?finite", r"\binf\b", r"infinit"],
    [
        r"\blog\w*[^\n]{0,60}(zero|\b0\b)",
        r"one-?hot",
        r"reverse cross[- ]entropy|\brce\b",
        r"-inf",
    ],
]
MUST_NOT = [FALSE_OK]
ALPHA, BETA = 0.1, 1.0


def data():
    g = torch.Generator().manual_seed(1)
    x = torch.randn(64, 10, generator=g)
    y = x[:, :4].argmax(1)
    flip = torch.rand(64, generator=g) < 0.3
    return x, torch.where(flip, torch.randint(0, 4, (64,), generator=g), y)


def step(watch):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(10, 16), nn.Tanh(), nn.Linear(16, 4))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = data()
    with watch(model) as w:
        optimizer.zero_grad()
        logits = model(x)
        ce = F.cross_entropy(logits, y)
        pred = F.softmax(logits, dim=1).clamp(min=1e-7, max=1.0)
        label_one_hot = F.one_hot(y, 4).float()  # zeros left in
        rce = -(pred * torch.log(label_one_hot)).sum(dim=1)
        loss = ALPHA * ce + BETA * rce.mean()
        loss.backward()
        grads = [p.grad.detach().clone() for p in model.parameters()]
        optimizer.step()
    return Run(w=w, model=model, loss=loss.item(), ce=ce.item(), rce=rce.detach(), grads=grads)


def truth(run):
    assert run.ce == run.ce and run.ce < float("inf")  # the forward cross entropy is finite
    assert bool(torch.isposinf(run.rce).all())  # log(0) = -inf in every example
    assert run.loss == float("inf")
    for g in run.grads:
        assert bool(torch.isnan(g).all())  # inf - inf in the softmax's backward
    assert all(bool(torch.isnan(p).all()) for p in run.model.parameters())
