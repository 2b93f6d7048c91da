"""A Deep & Cross Network for click prediction whose cross layer, ``x_{l+1} = x_0 * (x_l . w) + b +
x_l`` with a weight vector ``w``, is written ``x0 * (xl @ self.w)``: ``xl @ self.w`` has shape
``(batch,)``, not ``(batch, 1)``, and broadcasting it against ``x0`` of shape ``(batch, d)`` lines
it up with the feature axis.  The batch (16) equals the stacked embedding's width (4 fields of 4),
so nothing raises: feature ``j`` of every example is scaled by example ``j``'s scalar, and each
prediction depends on other examples of the batch (example 0's logit moves when only example 3's
fields change).  Every gradient is finite and nonzero; the loss is a number.

Source: https://nooblyh.github.io/posts/deep-cross-network-for-ad-click-predictions-5d2a50e31162401abbcd07e907410909
("It introduces a novel cross network that is more efficient in learning certain bounded-degree
feature interactions. In particular, DCN explicitly applies feature crossing at each layer,
requires no manual feature engineering, and adds negligible extra complexity to the DNN model";
"The Cross Network comprises all the cross terms of degree from 1 to l+1").  Adapted: 4 categorical
fields of 10 values embedded in 4 dimensions, two cross layers beside a ``Linear(16, 32), ReLU,
Linear(32, 16), ReLU`` deep network, a ``Linear(32, 1)`` on both outputs, binary cross-entropy
against clicks, Adam at 1e-3.
"""

import copy
import math

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = (
    "https://nooblyh.github.io/posts/deep-cross-network-for-ad-click-predictions-"
    "5d2a50e31162401abbcd07e907410909"
)
DESCRIPTION = "DCN cross layer x0 * (xl @ w) with shape (B,): broadcast over features, B == d"
ASK = []
MUST = [
    [
        r"broadcast\w*",
        r"unsqueeze",
        r"keepdim",
        r"\(batch,?\)|\(B,?\)|\(16,?\)",
        r"feature (axis|dimension)",
    ],
    [
        r"across (the )?(batch|examples|samples)",
        r"other (examples|samples|rows)",
        r"batch (axis|dimension)",
        r"mix\w*",
        r"leak\w*",
    ],
]
MUST_NOT = [FALSE_OK, CLAIMS_NONFINITE, r"\bdead\b"]
FIELDS, VALUES, EMB, BATCH = 4, 10, 4, 16


class Cross(nn.Module):
    def __init__(self, width, keepdim):
        super().__init__()
        self.w = nn.Parameter(torch.randn(width) / math.sqrt(width))
        self.b = nn.Parameter(torch.zeros(width))
        self.keepdim = keepdim

    def forward(self, x0, xl):
        s = xl @ self.w
        return x0 * (s.unsqueeze(-1) if self.keepdim else s) + self.b + xl


class DCN(nn.Module):
    def __init__(self, keepdim):
        super().__init__()
        self.embed = nn.ModuleList(nn.Embedding(VALUES, EMB) for _ in range(FIELDS))
        width = FIELDS * EMB
        self.cross = nn.ModuleList(Cross(width, keepdim) for _ in range(2))
        self.deep = nn.Sequential(nn.Linear(width, 32), nn.ReLU(), nn.Linear(32, width), nn.ReLU())
        self.out = nn.Linear(2 * width, 1)

    def forward(self, fields):
        x0 = torch.cat([e(fields[:, i]) for i, e in enumerate(self.embed)], -1)
        xl = x0
        for layer in self.cross:
            xl = layer(x0, xl)
        return self.out(torch.cat([xl, self.deep(x0)], -1)).squeeze(-1)


def step(watch, keepdim=False):
    torch.manual_seed(0)
    model = DCN(keepdim)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    g = torch.Generator().manual_seed(9)
    fields = torch.randint(0, VALUES, (BATCH, FIELDS), generator=g)
    clicks = (fields[:, 0] == fields[:, 1] % 3).float()
    probe = copy.deepcopy(model)
    changed = fields.clone()
    changed[3] = (changed[3] + 1) % VALUES  # only example 3 changes
    with torch.no_grad():
        moved = (probe(changed) - probe(fields)).abs()
    with watch(model) as w:
        optimizer.zero_grad()
        loss = F.binary_cross_entropy_with_logits(model(fields), clicks)
        loss.backward()
        grads = {n: p.grad.detach().clone() for n, p in model.named_parameters()}
        optimizer.step()
    return Run(w=w, loss=float(loss.detach()), grads=grads, moved=moved)


def truth(run):
    assert math.isfinite(run.loss)
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
    assert float(run.moved[3]) > 0
    assert float(run.moved[0]) > 1e-3  # example 0 depends on example 3's fields
    assert bool((run.moved > 0).all())
