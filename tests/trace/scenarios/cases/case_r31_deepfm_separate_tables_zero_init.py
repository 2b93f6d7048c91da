"""A DeepFM click model whose FM component and deep component each have their own embedding table,
as in Wide & Deep, and whose embeddings, like the first-order weights, are initialised to zero.  The
FM's second-order term ``0.5 * sum((sum_i v_i)^2 - sum_i v_i^2)`` is quadratic in the factors ``v``,
so its gradient with respect to them, ``sum_j v_j - v_i``, is exactly zero at ``v = 0``: the FM
table ``fm_embed`` gets an all-zero gradient on every step and never leaves zero, and the pairwise
interactions are never learned.  Nothing else reads it.  The deep table leaves zero on the first
step (its gradient comes through the deep network's first layer) and everything else trains; the
loss goes down.  Two steps are watched; nothing raises and every gradient is finite.

Source: https://tomesphere.com/paper/1703.04247 ("DeepFM is an end-to-end neural network model that
effectively captures both low- and high-order feature interactions"; "It introduces a novel neural
network architecture combining factorization machines and deep learning").  Adapted: the FM and the
deep part given separate tables (the abstract's point, "a shared input to its 'wide' and 'deep'
parts", missed); 6 categorical fields of 10 values, factors of size 8, a deep part ``Linear(48, 32),
GELU, Linear(32, 32), GELU, Linear(32, 1)``, 256 examples clicked when the first two fields have
values of the same parity, binary cross-entropy on the sum of the first-order, FM and deep logits,
Adam at 1e-3.
"""

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://tomesphere.com/paper/1703.04247"
DESCRIPTION = "DeepFM, FM table separate from the deep one and zero-init: FM factors stuck at zero"
ASK = ["fm_embed.weight"]
MUST = [
    [r"^summary:[^\n]*fm_embed"],
    [
        r"zero[- ]init\w*|zeros?_\(",
        r"initiali[sz]\w* (to|at|with|as) (all )?zeros?",
        (
            r"(weights?|embeddings?|factors?|parameters?|table) (are|is|were|was|start\w*) (all )?"
            r"(exactly )?(zero|0)\b"
        ),
        r"stuck|fixed point|saddle",
        r"quadratic",
    ],
]
MUST_NOT = [FALSE_OK, CLAIMS_NONFINITE, r"requires_grad\s*(=|is|was)?\s*False", r"\bdead\b"]
FIELDS, VALUES, K = 6, 10, 8


class DeepFM(nn.Module):
    def __init__(self, shared):
        super().__init__()
        self.shared = shared
        self.first_order = nn.Embedding(FIELDS * VALUES, 1)
        self.bias = nn.Parameter(torch.zeros(1))
        if shared:
            self.embed = nn.Embedding(FIELDS * VALUES, K)
        else:
            self.fm_embed = nn.Embedding(FIELDS * VALUES, K)
            self.deep_embed = nn.Embedding(FIELDS * VALUES, K)
        self.deep = nn.Sequential(
            nn.Linear(FIELDS * K, 32), nn.GELU(), nn.Linear(32, 32), nn.GELU(), nn.Linear(32, 1)
        )
        for table in (self.first_order, *self.tables()):
            nn.init.zeros_(table.weight)

    def tables(self):
        return (self.embed,) if self.shared else (self.fm_embed, self.deep_embed)

    def forward(self, fields):
        idx = fields + VALUES * torch.arange(FIELDS)
        fm_v = (self.embed if self.shared else self.fm_embed)(idx)  # (B, FIELDS, K)
        deep_v = (self.embed if self.shared else self.deep_embed)(idx)
        first = self.first_order(idx).sum((1, 2)) + self.bias
        second = 0.5 * (fm_v.sum(1).pow(2) - fm_v.pow(2).sum(1)).sum(1)
        deep = self.deep(deep_v.flatten(1)).squeeze(1)
        return first + second + deep


def data():
    g = torch.Generator().manual_seed(1)
    fields = torch.randint(0, VALUES, (256, FIELDS), generator=g)
    clicked = ((fields[:, 0] + fields[:, 1]) % 2 == 0).float()
    return fields, clicked


def step(watch, shared=False):
    torch.manual_seed(0)
    model = DeepFM(shared)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    fields, clicked = data()
    grads = []
    with watch(model) as w:
        for _ in range(2):
            optimizer.zero_grad()
            loss = F.binary_cross_entropy_with_logits(model(fields), clicked)
            loss.backward()
            grads.append({n: p.grad.detach().clone() for n, p in model.named_parameters()})
            optimizer.step()
    return Run(w=w, model=model, grads=grads, loss=float(loss.detach()))


def truth(run):
    first, second = run.grads
    assert "fm_embed.weight" in first and "deep_embed.weight" in first
    for n in first:
        for g in (first[n], second[n]):
            assert bool(torch.isfinite(g).all()), n
    assert bool((first["fm_embed.weight"] == 0).all())
    assert bool((second["fm_embed.weight"] == 0).all())
    assert bool((run.model.fm_embed.weight == 0).all())  # never moved
    assert bool(first["deep_embed.weight"].abs().sum() > 0)
    for n, g in second.items():
        assert bool(g.abs().sum() > 0) == (n != "fm_embed.weight"), n
