"""A label-smoothed cross-entropy written by hand with ``F.softmax`` where the formula needs
``F.log_softmax``: ``loss = -(target * softmax(z)).sum(-1).mean()`` with the smoothed target ``(1 -
a) * one_hot(y) + a / K``. That is not a cross-entropy but minus the expected smoothed-target
probability: it lies in [-1, 0] (the loss is negative), and its gradient with respect to a logit is
``-p_k (t_k - t . p)``, which shrinks with the probabilities (about 1/K of the cross-entropy's near
a uniform prediction, and vanishing for confidently wrong ones). Every gradient is finite and
nonzero; nothing raises.

Source: https://crackedaicode.com/problems/flax-label-smoothing ("target_n = (1 - α) * one_hot(y_n,
K) + α / K", "loss_n = -sum_k target_{n,k} * log_softmax(Z_n)_k"; "Common pitfalls ... Confusing
softmax with log_softmax: you want log_softmax because the loss is -sum(target * log_p)"). Adapted:
the page's formula in PyTorch on a tanh MLP with 4 classes, a 0.1, SGD at 0.1.
"""

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://crackedaicode.com/problems/flax-label-smoothing"
DESCRIPTION = "label smoothing written with softmax instead of log_softmax: negative, not a CE"
ASK = []
MUST = [
    [
        r"softmax[^\n]{0,60}(instead of|not|rather than|in place of)[^\n]{0,30}log",
        r"log_?softmax[^\n]{0,60}(missing|instead|should|needed|expected)",
        r"(missing|without|no|forgot\w*)[^\n]{0,30}\blog\b",
        r"negative loss",
        r"loss[^\n]{0,40}(is |was |goes )?negative",
        r"not (a |the )?(proper |real )?cross[- ]entropy",
        r"probabilit\w*[^\n]{0,40}not log",
    ],
]
MUST_NOT = [FALSE_OK, CLAIMS_NONFINITE]
ALPHA, K = 0.1, 4


def label_smoothing_loss(logits, y, alpha=ALPHA):
    target = (1 - alpha) * F.one_hot(y, K) + alpha / K
    return -(target * F.softmax(logits, dim=-1)).sum(-1).mean()


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
    logits = model(run.x)
    smoothed_ce = F.cross_entropy(logits, run.y, label_smoothing=ALPHA)
    ce_grads = torch.autograd.grad(smoothed_ce, list(model.parameters()))
    assert -1.0 <= run.loss < 0.0  # minus a probability: not a cross-entropy
    assert abs(run.loss - smoothed_ce.item()) > 1.0
    for g in run.grads:
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0)
    g_norm = torch.cat([g.flatten() for g in run.grads]).norm()
    ce_norm = torch.cat([c.flatten() for c in ce_grads]).norm()
    assert float(g_norm) < 0.5 * float(ce_norm)  # the probabilities scale the gradient down
