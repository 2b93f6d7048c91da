"""Co-teaching over an epoch whose last batch holds one example: each network ranks the batch by
its own loss and the number of small-loss examples kept is ``int((1 - forget_rate) * len(batch))``,
with forget rate 0.2 that is ``int(0.8) = 0`` for the last batch.  Each network is then updated on
an empty selection from its peer: ``F.cross_entropy`` of a ``(0, 3)`` batch with the mean
reduction is 0 / 0, NaN, and its backward gives every parameter an exactly-zero gradient (there is
no example for the gradient to come from).  The first iteration (a full batch of 64) is
ordinary; in the second both losses are NaN and both networks' gradients are all zero (Adam's
momentum still moves them).  Nothing raises.

Source: https://leeroopedia.com/index.php/Principle:Cleanlab_Cleanlab_Coteaching_Algorithm ("in each
mini-batch, each network computes the loss on all examples, selects the examples with the smallest
loss values (those most likely correctly labeled), and passes only those selected examples to the
other network for parameter updates"; "The noise rate in labels is known or can be estimated (used
to set the forget rate)").  Adapted: the kept count rounded down with ``int`` as in the original
Co-teaching code; two ``Linear(8, 32), Tanh, Linear(32, 3)`` networks in one module, 65 examples
with 20% of the labels flipped, batches of 64, an Adam at 1e-3 per network.
"""

import math

import torch
from scenario_kit import FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://leeroopedia.com/index.php/Principle:Cleanlab_Cleanlab_Coteaching_Algorithm"
DESCRIPTION = "co-teaching last batch of 1: int(0.8 * 1) = 0 kept, empty CE is NaN, all grads zero"
ASK = []
MUST = [
    [
        r"empty",
        r"no (example|sample|instance)s?",
        r"zero (example|sample|instance)s",
        r"num_remember",
        r"batch of (one|1)\b",
        r"last batch",
        r"int\(",
        r"round\w* down",
        r"0 / 0|0/0|division by zero",
    ],
    [r"\bnan\b", r"\bzero\b"],
]
MUST_NOT = [
    FALSE_OK,
    r"requires_grad\s*(=|is|was)?\s*False",
    r"not in (the |any )?optimi[sz]er",
    r"\bdead\b",
]
FORGET_RATE = 0.2


class Pair(nn.Module):
    def __init__(self):
        super().__init__()
        self.net1 = nn.Sequential(nn.Linear(8, 32), nn.Tanh(), nn.Linear(32, 3))
        self.net2 = nn.Sequential(nn.Linear(8, 32), nn.Tanh(), nn.Linear(32, 3))


def data(n):
    g = torch.Generator().manual_seed(1)
    x = torch.randn(n, 8, generator=g)
    y = (x[:, :3] - x[:, 3:6]).argmax(1)
    flip = torch.rand(n, generator=g) < 0.2
    return x, torch.where(flip, (y + 1) % 3, y)


def coteach(pair, x, y):
    logits1, logits2 = pair.net1(x), pair.net2(x)
    loss1 = F.cross_entropy(logits1, y, reduction="none")
    loss2 = F.cross_entropy(logits2, y, reduction="none")
    keep = int((1 - FORGET_RATE) * len(y))
    chosen1 = loss1.detach().argsort()[:keep]  # net1's small-loss examples, for net2
    chosen2 = loss2.detach().argsort()[:keep]  # net2's, for net1
    update1 = F.cross_entropy(logits1[chosen2], y[chosen2])
    update2 = F.cross_entropy(logits2[chosen1], y[chosen1])
    return keep, update1, update2


def step(watch, n=65, batch=64):
    torch.manual_seed(0)
    pair = Pair()
    opt1 = torch.optim.Adam(pair.net1.parameters(), lr=1e-3)
    opt2 = torch.optim.Adam(pair.net2.parameters(), lr=1e-3)
    x, y = data(n)
    iterations = []
    with watch(pair) as w:
        for start in range(0, n, batch):
            xb, yb = x[start : start + batch], y[start : start + batch]
            opt1.zero_grad()
            opt2.zero_grad()
            keep, update1, update2 = coteach(pair, xb, yb)
            (update1 + update2).backward()
            grads = {n: p.grad.detach().clone() for n, p in pair.named_parameters()}
            iterations.append((len(yb), keep, update1.item(), update2.item(), grads))
            opt1.step()
            opt2.step()
    return Run(w=w, iterations=iterations)


def truth(run):
    (size1, keep1, a1, b1, grads1), (size2, keep2, a2, b2, grads2) = run.iterations
    assert (size1, keep1) == (64, 51) and (size2, keep2) == (1, 0)
    assert not any(map(math.isnan, (a1, b1))) and all(map(math.isnan, (a2, b2)))  # NaN: last
    for n, g in grads1.items():
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
    for n, g in grads2.items():
        assert bool((g == 0).all()), n
