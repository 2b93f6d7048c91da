"""Matrix factorisation for implicit feedback (a user-item matrix of ones where a user interacted
with an item, nothing elsewhere) trained on the squared error over the observed entries only.  Every
target is 1, so a matrix of all ones has zero loss, and nothing in the loss says where the
unobserved pairs should be: after 200 Adam steps the observed entries are fitted exactly (loss
below 1e-4) and the pairs that were never observed score 0.64 on average (0.09 with the gravity
term of the control), the model is not taught that they are less likely.  Every gradient is finite
and nonzero; nothing raises.

Source: https://developers.google.com/machine-learning/recommendation/collaborative/matrix ("In this
objective function, you only sum over observed pairs (i, j), that is, over non-zero values in the
feedback matrix. However, only summing over values of one is not a good idea—a matrix of all ones
will have a minimal loss and produce a model that can't make effective recommendations").  Adapted:
20 users, 30 items, a quarter of the pairs observed, 8-dimensional ``nn.Embedding`` factors, 200
unwatched Adam steps, then one watched step.
"""

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn

SOURCE = "https://developers.google.com/machine-learning/recommendation/collaborative/matrix"
DESCRIPTION = "implicit-feedback MF on observed ones only: every pair scores ~1, unobserved too"
ASK = []
MUST = [
    [
        r"unobserved|(only|just) (the )?(observed|positive|non-?zero)",
        r"all(-| )ones|every (target|label|entry)[^\n]{0,20}\b(1|one)\b",
        r"(targets?|labels?)[^\n]{0,30}(all|every)[^\n]{0,20}\b(1|one|same|constant)\b",
        r"trivial",
        r"(no|without) negatives?",
        r"negative (examples|samples|feedback|pairs)",
        r"gravity|weighted matrix factori[sz]ation|\bWALS\b",
    ],
]
MUST_NOT = [FALSE_OK, CLAIMS_NONFINITE, r"dead (units?|relu|neurons?)", r"no_grad"]
USERS, ITEMS, DIM = 20, 30, 8


class MF(nn.Module):
    def __init__(self):
        super().__init__()
        self.user = nn.Embedding(USERS, DIM)
        self.item = nn.Embedding(ITEMS, DIM)
        nn.init.normal_(self.user.weight, std=0.1)
        nn.init.normal_(self.item.weight, std=0.1)

    def forward(self, u, i):
        return (self.user(u) * self.item(i)).sum(-1)


def feedback():
    g = torch.Generator().manual_seed(1)
    observed = torch.rand(USERS, ITEMS, generator=g) < 0.25
    users, items = torch.meshgrid(torch.arange(USERS), torch.arange(ITEMS), indexing="ij")
    return observed, users.flatten(), items.flatten()


def loss_fn(model, observed, users, items):
    scores = model(users, items)
    obs = observed.flatten()
    return ((scores[obs] - 1.0) ** 2).mean()  # observed pairs only, every target 1


def step(watch):
    torch.manual_seed(0)
    model = MF()
    optimizer = torch.optim.Adam(model.parameters(), lr=0.05)
    observed, users, items = feedback()
    for _ in range(200):
        optimizer.zero_grad()
        loss_fn(model, observed, users, items).backward()
        optimizer.step()
    with watch(model) as w:
        optimizer.zero_grad()
        loss = loss_fn(model, observed, users, items)
        loss.backward()
        grads = {n: p.grad.detach().clone() for n, p in model.named_parameters()}
        optimizer.step()
    with torch.no_grad():
        scores = model(users, items).reshape(USERS, ITEMS)
    return Run(w=w, loss=loss.item(), grads=grads, scores=scores, observed=observed)


def truth(run):
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
    assert run.loss < 1e-4
    # a model scoring every pair 1 reaches the same minimum
    ones = torch.ones(USERS, ITEMS)
    assert float(((ones[run.observed] - 1.0) ** 2).mean()) == 0.0
    unobserved = run.scores[~run.observed]
    assert float(unobserved.mean()) > 0.5  # never-seen pairs score high
