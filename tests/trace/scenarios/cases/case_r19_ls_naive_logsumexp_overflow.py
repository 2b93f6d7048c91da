"""A label-smoothed cross-entropy written by hand with a naive log-sum-exp, ``log_p = z -
log(exp(z).sum())``, on a softmax classifier fed raw pixel values (0 to 255, never scaled). Its
logits reach the hundreds; ``exp`` overflows float32 above about 88.7, so ``exp(z).sum()`` is
``inf`` in those rows, every ``log_p`` there is ``-inf`` and, with the smoothed target putting mass
on every class, the loss is ``inf``. In backward ``exp(z) / sum`` is ``inf / inf = NaN``: the weight
and bias gradients are NaN and the SGD step writes NaN into the weights. The same logits give a
finite loss through ``F.cross_entropy(..., label_smoothing=a)``, which subtracts the maximum first.

Source: https://prof.lexailabs.com/practice/label-smoothing-loss ("Implement
label_smoothing_loss(logits, target, alpha)"; "Use a numerically-stable log_softmax (subtract
logits.max() first)"; "Use a stable log_softmax (subtract the max before exp), or large logits like
[1000, 1001, 1002] overflow"). Adapted: the page's loss over a batch, a ``Linear(256, 3)`` on 16 x
16 images with pixel values 0 to 255, a 0.1, SGD at 1e-5.
"""

import math

import torch
from scenario_kit import FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://prof.lexailabs.com/practice/label-smoothing-loss"
DESCRIPTION = "hand-written label smoothing with naive log(sum(exp(z))): exp overflows, inf/NaN"
ASK = []
MUST = [
    [r"\bnan\b", r"non-?finite", r"\binf\b", r"infinit"],
    [
        r"overflow",
        r"\bexp\b",
        r"log[- ]?sum[- ]?exp",
        r"subtract\w*[^\n]{0,30}max",
        r"(large|huge|big)[^\n]{0,20}(logit|value|input|activation|output)",
        r"(unscaled|unnormali[sz]ed|raw)[^\n]{0,30}(pixel|input|feature)",
        r"(numerically )?(unstable|stable)",
    ],
]
MUST_NOT = [FALSE_OK]
ALPHA, K = 0.1, 3


def label_smoothing_loss(logits, target, alpha=ALPHA):
    log_p = logits - torch.log(torch.exp(logits).sum(-1, keepdim=True))
    soft = (1 - alpha) * F.one_hot(target, K) + alpha / K
    return -(soft * log_p).sum(-1).mean()


def data():
    g = torch.Generator().manual_seed(1)
    images = torch.randint(0, 256, (32, 1, 16, 16), generator=g).float()  # raw pixel values
    y = (images[:, 0, :8].mean((1, 2)) > images[:, 0, 8:].mean((1, 2))).long()
    y = y + (images[:, 0, :, :8].mean((1, 2)) > 127.5).long()
    return images, y


def step(watch):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Flatten(), nn.Linear(256, K))
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-5)
    x, y = data()
    with watch(model) as w:
        optimizer.zero_grad()
        logits = model(x)
        loss = label_smoothing_loss(logits, y)
        loss.backward()
        grads = [p.grad.detach().clone() for p in model.parameters()]
        optimizer.step()
    return Run(w=w, model=model, logits=logits.detach(), y=y, loss=loss.item(), grads=grads)


def truth(run):
    overflow = math.log(torch.finfo(torch.float32).max)  # about 88.72
    rows = (run.logits > overflow).any(1)
    assert int(rows.sum()) >= 1  # exp overflows in these rows
    assert bool(torch.isfinite(run.logits).all())  # the logits themselves are finite
    assert run.loss == math.inf
    assert math.isfinite(F.cross_entropy(run.logits, run.y, label_smoothing=ALPHA).item())
    assert all(bool(torch.isnan(g).any()) for g in run.grads)
    assert bool(torch.isnan(run.model[1].weight).any())  # the step wrote NaN
