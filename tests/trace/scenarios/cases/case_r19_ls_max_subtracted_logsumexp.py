"""Control: the same hand-written label-smoothed cross-entropy on the same raw-pixel softmax
classifier, with the log-sum-exp made stable as the page asks, ``m = z.max(-1)``, ``log_p = z - m -
log(exp(z - m).sum())``. The logits still reach the hundreds, but no ``exp`` overflows: the loss is
finite, equal to ``F.cross_entropy(..., label_smoothing=a)``, and every gradient is finite and
nonzero; the weights stay finite after the step.

Source: https://prof.lexailabs.com/practice/label-smoothing-loss ("Use a numerically-stable
log_softmax (subtract logits.max() first)"; "Use a stable log_softmax (subtract the max before exp),
or large logits like [1000, 1001, 1002] overflow"). Adapted: the page's loss over a batch, a
``Linear(256, 3)`` on 16 x 16 images with pixel values 0 to 255, a 0.1, SGD at 1e-5.
"""

import math

import torch
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://prof.lexailabs.com/practice/label-smoothing-loss"
DESCRIPTION = "control: hand-written label smoothing with max-subtracted log-sum-exp: finite"
ASK = []
MUST = [
    [
        HEALTHY_OK,
        r"^summary:[^\n]*(saturat\w*|large logits|unscaled|unnormali[sz]ed|raw pixel)",
    ]
]
MUST_NOT = [CLAIMS_NONFINITE, CLAIMS_ERROR, r"overflow"]
ALPHA, K = 0.1, 3


def label_smoothing_loss(logits, target, alpha=ALPHA):
    m = logits.max(-1, keepdim=True).values
    log_p = logits - m - torch.log(torch.exp(logits - m).sum(-1, keepdim=True))
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
    overflow = math.log(torch.finfo(torch.float32).max)
    assert int((run.logits > overflow).any(1).sum()) >= 1  # logits a naive exp would overflow
    assert math.isfinite(run.loss)
    builtin = F.cross_entropy(run.logits, run.y, label_smoothing=ALPHA).item()
    assert abs(run.loss - builtin) < 1e-3 * max(1.0, abs(builtin))
    for g in run.grads:
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0)
    assert all(bool(torch.isfinite(p).all()) for p in run.model.parameters())
