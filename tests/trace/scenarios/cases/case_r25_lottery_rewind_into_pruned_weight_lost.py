"""A lottery-ticket round with ``torch.nn.utils.prune``: a dense network is trained for 20 steps,
80% of the weights of its two hidden layers are pruned by magnitude (``l1_unstructured``), and
the surviving weights are "rewound" to their initial values by writing into the pruned modules'
``weight`` (``m.weight.copy_(init * m.weight_mask)`` under ``no_grad``).  After pruning,
``weight`` is no longer a parameter but a tensor that a forward pre-hook recomputes as
``weight_orig * weight_mask`` before every forward: the write is overwritten at the next forward,
``weight_orig`` keeps the trained values, and the retraining step runs from the trained weights,
not from the initialisation.  The pruned entries of ``weight_orig`` get exactly-zero gradients (the
mask), the others finite, nonzero ones; nothing raises.

Source: https://www.arxiv-vanity.com/papers/1905.01067/ ("after training a network, set all
weights smaller than some threshold to zero, pruning them ..., rewind the rest of the weights to
their initial configuration, and then retrain the network from this starting configuration but
with the zero weights frozen (not trained)").  Adapted: ``Linear(16, 64), Tanh, Linear(64, 64),
Tanh, Linear(64, 4)`` on 256 examples, Adam at 1e-2 for the dense phase, the two hidden layers
pruned at 80%, a fresh Adam at 1e-3 over the pruned model for the watched retraining step.
"""

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn
from torch.nn import functional as F
from torch.nn.utils import prune

SOURCE = "https://www.arxiv-vanity.com/papers/1905.01067/"
DESCRIPTION = (
    "lottery rewind written into pruned m.weight: recomputed from weight_orig, rewind lost"
)
ASK = []
MUST = [
    [r"rewind\w*", r"rewound", r"\breset\w*", r"initiali[sz]ation", r"initial (values|weights)"],
    [
        r"weight_orig",
        r"pre[- ]?hook",
        r"recomput\w*",
        r"overwr\w*",
        r"\blost\b",
        r"no effect",
        r"(was|were|is|are) not (rewound|reset|restored)",
    ],
]
MUST_NOT = [
    FALSE_OK,
    CLAIMS_NONFINITE,
    r"\bdead\b",
    r"requires_grad\s*(=|is|was)?\s*False",
    r"not in (the |any )?optimi[sz]er",
]
PRUNED = ("0", "2")


def data():
    g = torch.Generator().manual_seed(1)
    x = torch.randn(256, 16, generator=g)
    return x, (x[:, :4] + 0.5 * x[:, 4:8]).argmax(1)


def step(watch, rewind_orig=False):
    torch.manual_seed(0)
    model = nn.Sequential(
        nn.Linear(16, 64), nn.Tanh(), nn.Linear(64, 64), nn.Tanh(), nn.Linear(64, 4)
    )
    init = {k: model[int(k)].weight.detach().clone() for k in PRUNED}
    x, y = data()
    dense = torch.optim.Adam(model.parameters(), lr=1e-2)
    for _ in range(20):
        dense.zero_grad()
        F.cross_entropy(model(x), y).backward()
        dense.step()
    trained = {k: model[int(k)].weight.detach().clone() for k in PRUNED}
    for k in PRUNED:
        prune.l1_unstructured(model[int(k)], name="weight", amount=0.8)
    with torch.no_grad():
        for k in PRUNED:
            m = model[int(k)]
            target = m.weight_orig if rewind_orig else m.weight
            target.copy_(init[k] * m.weight_mask if not rewind_orig else init[k])
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    with watch(model) as w:
        optimizer.zero_grad()
        loss = F.cross_entropy(model(x), y)
        used = {k: model[int(k)].weight.detach().clone() for k in PRUNED}
        loss.backward()
        grads = {n: p.grad.detach().clone() for n, p in model.named_parameters()}
        optimizer.step()
    masks = {k: model[int(k)].weight_mask.clone() for k in PRUNED}
    return Run(w=w, init=init, trained=trained, used=used, masks=masks, grads=grads)


def _masks_and_grads(run):
    for k, mask in run.masks.items():
        assert abs(float(mask.mean()) - 0.2) < 0.01
        g = run.grads[f"{k}.weight_orig"]
        assert bool((g[mask == 0] == 0).all()) and bool((g[mask == 1] != 0).any()), k
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n


def truth(run):
    _masks_and_grads(run)
    for k, mask in run.masks.items():
        assert torch.equal(run.used[k], run.trained[k] * mask)  # the trained weights, not rewound
        kept = mask == 1
        assert not torch.allclose(run.used[k][kept], run.init[k][kept])
