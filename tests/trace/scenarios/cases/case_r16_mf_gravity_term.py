"""Control: the same implicit-feedback matrix factorisation (20 users, 30 items, a quarter of the
pairs observed as ones) with the squared error over the observed pairs plus a gravity term, the mean
of the squared dot products over all pairs, which pulls every prediction towards 0.  After the same
200 Adam steps the observed pairs score high and the never-observed ones low: the model separates
them.  Every gradient is finite and nonzero.

Source: https://zzong2006.github.io/recommendation_system/matrix-factorization ("Gravity term: A
global prior that pushes the prediction of any pair towards zero. This is given by g(U,V) =
1/(MN) ∑∑ ⟨Ui,Vj⟩²"; "The total loss is then given by ... + λr r(U,V) + λg g(U,V)").  Adapted: the
gravity term with weight 1, no ℓ2 term.
"""

import torch
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK, Run
from torch import nn

SOURCE = "https://zzong2006.github.io/recommendation_system/matrix-factorization"
DESCRIPTION = "control: implicit MF, observed squared error + gravity term over all pairs"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [CLAIMS_NONFINITE, CLAIMS_ERROR, r"trivial", r"no gradient", r"all-zero"]
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
    gravity = (scores**2).mean()  # every pair pulled towards 0
    return ((scores[obs] - 1.0) ** 2).mean() + 1.0 * gravity


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
    assert float(run.scores[run.observed].mean()) > 0.5
    assert float(run.scores[~run.observed].mean()) < 0.3
