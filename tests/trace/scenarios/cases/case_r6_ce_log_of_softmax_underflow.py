"""Cross-entropy written by hand as ``-log(softmax(logits)[target])``: the logits of this
classifier are spread wide (its last layer's weights are large), the softmax probability of some
targets underflows to exactly 0 in float32, ``log`` gives -inf, the loss is inf and the backward
fills every gradient with NaN (0 * inf in softmax's backward).  The optimizer step then writes NaN
into the weights.

Source: https://lynx-cortex.pages.dev/phase-05-probability-information/break/00-break-log-of-softmax/
("Compute cross-entropy via log(softmax(x)) instead of log_softmax"; "will silently work on small
logits, then produce -inf / nan whenever any target has a softmax probability that underflows to
0 in fp32").
"""

import torch
from scenario_kit import FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = (
    "https://lynx-cortex.pages.dev/phase-05-probability-information/break/00-break-log-of-softmax/"
)
DESCRIPTION = "-log(softmax(x)[y]) by hand, wide logits: target prob underflows to 0, loss inf, NaN"
ASK = []
MUST = [
    [r"\bnan\b", r"non-?finite", r"\binf\b", r"infinit"],
    [
        r"\blog\b",
        r"LogBackward",
        r"log_?softmax",
        r"softmax",
        r"underflow",
        r"log of (zero|0)",
        r"cross.?entropy",
    ],
]
MUST_NOT = [FALSE_OK]


def make(scale: float = 60.0):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(6, 32), nn.ReLU(), nn.Linear(32, 5))
    with torch.no_grad():
        model[2].weight.mul_(scale)  # a classifier whose logits are spread wide
    g = torch.Generator().manual_seed(1)
    x = torch.randn(32, 6, generator=g) * 3
    y = torch.randint(0, 5, (32,), generator=g)
    return model, x, y


def step(watch, hand_written: bool = True):
    model, x, y = make()
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    with watch(model) as w:
        opt.zero_grad()
        logits = model(x)
        if hand_written:
            probs = F.softmax(logits, dim=1)
            loss = -torch.log(probs.gather(1, y[:, None])).mean()
        else:
            loss = -F.log_softmax(logits, dim=1).gather(1, y[:, None]).mean()
        loss.backward()
        grads = {n: p.grad.clone() for n, p in model.named_parameters()}
        opt.step()
    return Run(w=w, model=model, loss=loss.item(), grads=grads, logits=logits.detach(), y=y)


def truth(run):
    probs = F.softmax(run.logits, dim=1).gather(1, run.y[:, None])
    assert bool((probs == 0).any())  # some target's probability underflowed to 0
    assert run.loss == float("inf")
    assert any(bool(torch.isnan(g).any()) for g in run.grads.values())
    assert any(bool(torch.isnan(p).any()) for p in run.model.parameters())
