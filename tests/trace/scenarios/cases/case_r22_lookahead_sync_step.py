"""A healthy recipe: Lookahead ("k steps forward, 1 step back") around Adam, ``k = 5``, ``alpha =
0.5``.  The inner Adam moves the model's (fast) weights for five steps; on the fifth the wrapper
pulls the slow weights halfway towards the fast ones and resets the fast weights to them, so
right after Adam's fifth update every parameter is moved back by half the distance it travelled
in the five steps.  The watched block is that fifth step.  Nothing is wrong: the loss is lower
than at the start, and every parameter has a finite, nonzero gradient.

Source: https://junaidaliop.github.io/zij/math/lookahead/ ("Lookahead keeps two sets of weights.
The fast weights theta are advanced for k inner steps by a base optimizer, after which the slow
weights phi are pulled toward them by interpolation, and the fast weights are reset to the slow
ones"; "Lookahead(torch.optim.Adam(model.parameters(), lr=1e-3), k=5, alpha=0.5)").  Adapted: a
small ``Lookahead`` wrapper written for the step (the page's signature), Adam at 0.01, a
``Linear(10, 16)``, ``Tanh``, ``Linear(16, 3)`` classifier, 128 examples, four steps before the
watched one.
"""

import torch
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://junaidaliop.github.io/zij/math/lookahead/"
DESCRIPTION = "healthy: Lookahead(Adam, k=5, alpha=0.5), the sync step: weights pulled back halfway"
ASK = []
MUST = [[HEALTHY_OK, r"lookahead", r"slow weights?"]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    r"all[- ]zero",
    r"\bzero grad\w*",
    r"\bdead\b",
    r"requires_grad\s*(=|is|was)?\s*False",
    r"not in (the |any )?optimi[sz]er",
]


class Lookahead:
    """k inner steps, then slow += alpha * (fast - slow) and fast = slow."""

    def __init__(self, optimizer, k=5, alpha=0.5):
        self.optimizer, self.k, self.alpha, self.count = optimizer, k, alpha, 0
        self.slow = [
            [p.detach().clone() for p in group["params"]] for group in optimizer.param_groups
        ]

    def zero_grad(self):
        self.optimizer.zero_grad()

    @torch.no_grad()
    def step(self):
        self.optimizer.step()
        self.count += 1
        if self.count % self.k == 0:
            for group, slow in zip(self.optimizer.param_groups, self.slow, strict=True):
                for p, s in zip(group["params"], slow, strict=True):
                    s.add_(p - s, alpha=self.alpha)
                    p.copy_(s)


def data():
    g = torch.Generator().manual_seed(1)
    x = torch.randn(128, 10, generator=g)
    return x, (x[:, :3] + 0.5 * x[:, 3:6]).argmax(1)


def step(watch):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(10, 16), nn.Tanh(), nn.Linear(16, 3))
    optimizer = Lookahead(torch.optim.Adam(model.parameters(), lr=0.01), k=5, alpha=0.5)
    x, y = data()
    start = [p.detach().clone() for p in model.parameters()]
    losses = []
    for _ in range(4):
        optimizer.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    fast_before = [p.detach().clone() for p in model.parameters()]
    with watch(model) as w:
        optimizer.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        grads = [p.grad.detach().clone() for p in model.parameters()]
        optimizer.step()
    losses.append(loss.item())
    after = F.cross_entropy(model(x), y).item()
    return Run(w=w, model=model, optimizer=optimizer, start=start, fast_before=fast_before,
               grads=grads, losses=losses, after=after)  # fmt: skip


def truth(run):
    assert run.optimizer.count == 5  # the watched step is the synchronising one
    for p, s0, s in zip(run.model.parameters(), run.start, run.optimizer.slow[0], strict=True):
        assert torch.equal(p.detach(), s)  # fast weights reset to the slow ones
        assert not torch.equal(s, s0)  # which moved halfway from the start
    for g in run.grads:
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0)
    assert run.after < run.losses[0]  # still better than where it began
