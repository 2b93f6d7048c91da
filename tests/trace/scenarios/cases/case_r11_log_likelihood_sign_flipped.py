"""Overfitting one batch with the loss written as the mean log-probability of the true classes,
``log_softmax(logits).gather(1, y).mean()``, the minus sign of the negative log-likelihood left
out.  Minimising it lowers the probability of the right class: over two steps on the same batch
the loss goes down (further below zero) while the true classes' log-probability falls and the
accuracy drops.  Every gradient is finite and nonzero; nothing raises.

Source: https://brainfeed.ai/pages/why-you-should-always-overfit-a-single-batch-to-debug-your-deep-learning-model-nAZdK.html
("If the error increases rather than decreases, a common culprit is an objective sign error -
such as minimizing log probability when the training code expects the negative log
probability").
"""

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = (
    "https://brainfeed.ai/pages/"
    "why-you-should-always-overfit-a-single-batch-to-debug-your-deep-learning-model-nAZdK.html"
)
DESCRIPTION = "loss = mean log-probability of the targets (minus sign missing): training unlearns"
ASK = []
MUST = [
    [
        r"log-?probabilit",
        r"log_softmax",
        r"log-?likelihood",
        r"\bsign\b",
        r"\bminus\b",
        r"\bnll",
        r"maximi[sz]",
    ],
    [
        r"negative",
        r"wrong (way|direction|sign)",
        r"(lower|lowers|decreas\w*|push\w*)[^\n]{0,40}(probabilit|likelihood)",
        r"away from",
        r"below zero",
    ],
]
MUST_NOT = [FALSE_OK, CLAIMS_NONFINITE]


def true_class_log_prob(model, x, y):
    with torch.no_grad():
        return F.log_softmax(model(x), -1).gather(1, y[:, None]).mean().item()


def step(watch, cross_entropy: bool = False):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Linear(32, 4))
    opt = torch.optim.SGD(model.parameters(), lr=0.5)
    g = torch.Generator().manual_seed(1)
    x, y = torch.randn(16, 10, generator=g), torch.randint(0, 4, (16,), generator=g)
    start = true_class_log_prob(model, x, y)
    losses = []
    with watch(model) as w:
        for _ in range(2):  # the same batch twice: overfit one batch
            opt.zero_grad()
            logits = model(x)
            if cross_entropy:
                loss = F.cross_entropy(logits, y)
            else:
                loss = F.log_softmax(logits, -1).gather(1, y[:, None]).mean()
            loss.backward()
            opt.step()
            losses.append(loss.item())
    end = true_class_log_prob(model, x, y)
    return Run(w=w, start=start, end=end, losses=losses)


def truth(run):
    assert run.losses[0] < 0 and run.losses[1] < run.losses[0]
    assert run.end < run.start  # the right classes became less likely
