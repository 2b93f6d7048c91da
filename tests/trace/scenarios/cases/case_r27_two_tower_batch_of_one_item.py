"""A two-tower retrieval model trained with in-batch negatives (softmax over the batch's items,
the diagonal as the positive) on an interaction log sorted by item and batched without shuffling:
the batch is 64 users who all interacted with the same item.  Every in-batch "negative" is the
positive item itself, the 64 logits of each row are identical, the softmax is uniform and the loss is
exactly ``log 64`` whatever the parameters; its gradient cancels (what a user's row gains from its
positive it loses to 63 copies of the same item).  Every gradient is finite and at rounding level
(below 1e-5, about 1e-6 of the control's); Adam, which divides by the gradients' own scale, still
moves every parameter by about its learning rate, in directions set by the rounding.  Nothing
raises.

Source: https://www.systemoverflow.com/learn/ml-recommendation-systems/two-tower-models/training-two-tower-models-with-in-batch-negatives
("within each mini batch of say 512 positive pairs, every other item in that batch serves as a
negative for each user"; "Training requires careful shuffling so users in the same batch have
diverse positives; otherwise negatives become trivial and the model does not learn meaningful
distinctions").  Adapted: 64 users and 200 items with 24 random features each, a user tower and an
item tower ``Linear(24, 32), Tanh, Linear(32, 16)``, L2-normalised embeddings, temperature 0.1, the
batch of 64 interactions of item 7, Adam at 1e-3.
"""

import math

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = (
    "https://www.systemoverflow.com/learn/ml-recommendation-systems/two-tower-models/"
    "training-two-tower-models-with-in-batch-negatives"
)
DESCRIPTION = "in-batch negatives on an unshuffled batch of one item: loss log 64, zero gradient"
ASK = []
MUST = [
    [
        r"identical",
        r"same item",
        r"(one|single) item",
        r"duplicat\w*",
        r"shuffl\w*",
        r"sorted",
        r"uniform",
        r"log\s?\(?\s?64",
        r"\b4\.15\d*",
        r"negatives?[^\n]{0,60}(positive|same|itself)",
    ],
    [
        r"\bzero\b",
        r"tiny",
        r"vanish\w*",
        r"near(ly)? (zero|0)",
        r"no (learning )?signal",
        r"1e-\d+",
        r"cancel\w*",
    ],
]
MUST_NOT = [
    FALSE_OK,
    CLAIMS_NONFINITE,
    r"\bdead\b",
    r"requires_grad\s*(=|is|was)?\s*False",
    r"not in (the |any )?optimi[sz]er",
]
BATCH, TAU = 64, 0.1


class TwoTower(nn.Module):
    def __init__(self):
        super().__init__()
        self.user = nn.Sequential(nn.Linear(24, 32), nn.Tanh(), nn.Linear(32, 16))
        self.item = nn.Sequential(nn.Linear(24, 32), nn.Tanh(), nn.Linear(32, 16))

    def forward(self, users, items):
        return F.normalize(self.user(users), dim=-1) @ F.normalize(self.item(items), dim=-1).T


def features():
    g = torch.Generator().manual_seed(1)
    return torch.randn(BATCH, 24, generator=g), torch.randn(200, 24, generator=g)


def step(watch, items_in_batch=None):
    torch.manual_seed(0)
    model = TwoTower()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    users, item_table = features()
    if items_in_batch is None:
        items_in_batch = torch.full((BATCH,), 7)  # the log sorted by item: one item per batch
    with watch(model) as w:
        optimizer.zero_grad()
        logits = model(users, item_table[items_in_batch]) / TAU
        loss = F.cross_entropy(logits, torch.arange(BATCH))
        loss.backward()
        grads = {n: p.grad.detach().clone() for n, p in model.named_parameters()}
        optimizer.step()
    return Run(w=w, items=items_in_batch, loss=float(loss.detach()), grads=grads)


def truth(run):
    assert len(set(run.items.tolist())) == 1
    assert abs(run.loss - math.log(BATCH)) < 1e-5
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()) and float(g.abs().max()) < 1e-5, n
