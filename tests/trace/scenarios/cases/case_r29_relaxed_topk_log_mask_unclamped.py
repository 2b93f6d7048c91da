"""Instance-wise feature selection with a relaxed Gumbel top-k subset: the selector's logits plus
Gumbel noise go through k rounds of a softmax at temperature 0.1, each round adding ``log(1 -
onehot)`` of the previous round to the logits so that an item already taken is not taken again. The
reference code clamps ``1 - onehot`` at a small epsilon before the log; here it is unclamped. At a
temperature of 0.1 some rounds saturate: an entry of the softmax is exactly 1.0 in float32, ``log(1
- 1.0)`` is ``-inf``, and the next round's softmax gives that entry exactly 0.  The forward is
finite (the k-hot mask sums to k, the loss is finite); in the backward ``log``'s derivative ``1 / (1
- onehot)`` meets a zero gradient at that entry, ``0 / 0``, and the selector's gradients hold NaN.
The classifier's gradients are finite.  Nothing raises.

Source: https://www.emergentmind.com/topics/gumbel-subset-sampling-gss ("GSS is a method that
extends the Gumbel-Max trick to sample exact k-element subsets from distributions using Gumbel
perturbations"; "It includes hard sampling approaches like Gumbel-Top-k as well as continuous
relaxations to enable differentiable optimization in tasks like variational inference and sensor
design").  Adapted: the continuous relaxation of Xie and Ermon (2019) written without the clamp (the
page surveys the methods, not the slip); 64 rows of 16 features, a binary label from the first
three, a selector ``Linear(16, 32), Tanh, Linear(32, 16)`` choosing k = 4 features per row, a
classifier ``Linear(16, 32), Tanh, Linear(32, 2)`` on the masked row, cross-entropy, Adam at 1e-3.
"""

import math

import torch
from scenario_kit import FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://www.emergentmind.com/topics/gumbel-subset-sampling-gss"
DESCRIPTION = "relaxed top-k adds log(1 - onehot) unclamped: saturated round, 0/0 NaN in selector"
ASK = []
MUST = [
    [r"\bnan\b|non-?finite|\binf\b|infinit"],
    [
        r"log\s?\(?\s?1\s?-",
        r"log\s?\(?\s?0\)?",
        r"log[^\n]{0,40}(zero|exact(ly)? 0)",
        r"clamp\w*",
        r"saturat\w*",
        r"one-?hot",
        r"temperature|\btau\b",
        r"\b0\s?/\s?0\b",
        r"\beps(ilon)?\b",
        r"LogBackward",
    ],
]
MUST_NOT = [FALSE_OK, r"\bdead\b", r"requires_grad\s*(=|is|was)?\s*False"]
FEATURES, K, TAU = 16, 4, 0.1


class Selector(nn.Module):
    def __init__(self, clamp):
        super().__init__()
        self.clamp = clamp
        self.scores = nn.Sequential(nn.Linear(FEATURES, 32), nn.Tanh(), nn.Linear(32, FEATURES))
        self.classifier = nn.Sequential(nn.Linear(FEATURES, 32), nn.Tanh(), nn.Linear(32, 2))

    def relaxed_topk(self, logits):
        u = torch.rand(logits.shape).clamp(1e-10, 1 - 1e-10)
        s = logits - torch.log(-torch.log(u))  # Gumbel-perturbed
        onehot, khot = torch.zeros_like(s), torch.zeros_like(s)
        for _ in range(K):
            keep = 1 - onehot
            if self.clamp:
                keep = torch.clamp(keep, min=1e-20)
            s = s + torch.log(keep)
            onehot = torch.softmax(s / TAU, -1)
            khot = khot + onehot
        return khot

    def forward(self, x):
        khot = self.relaxed_topk(self.scores(x))
        return self.classifier(x * khot), khot


def data():
    g = torch.Generator().manual_seed(1)
    x = torch.randn(64, FEATURES, generator=g)
    return x, (x[:, :3].sum(1) > 0).long()


def step(watch, clamp=False):
    torch.manual_seed(0)
    model = Selector(clamp)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    x, y = data()
    with watch(model) as w:
        optimizer.zero_grad()
        logits, khot = model(x)
        loss = F.cross_entropy(logits, y)
        loss.backward()
        grads = {n: p.grad.detach().clone() for n, p in model.named_parameters()}
        optimizer.step()
    return Run(w=w, khot=khot.detach(), loss=float(loss.detach()), grads=grads)


def truth(run):
    assert math.isfinite(run.loss) and bool(torch.isfinite(run.khot).all())
    assert torch.allclose(run.khot.sum(1), torch.full((64,), float(K)), atol=1e-4)
    assert bool((run.khot == 1.0).any())  # a saturated round
    for n, g in run.grads.items():
        if n.startswith("scores"):
            assert bool(torch.isnan(g).any()), n
        else:
            assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
