"""A classifier whose output probabilities come from sparsemax, trained with the negative log
likelihood of those probabilities, ``F.nll_loss(torch.log(sparsemax(z)), y)``.  Sparsemax is the
Euclidean projection of the logits onto the simplex: classes below its threshold ``tau`` get a
probability of exactly 0.  For every example whose labelled class is outside the support the
log-probability is ``-inf`` and the loss is ``inf``.  Its gradient is not NaN: the backward of
``clamp(z - tau, min=0)`` drops the ``-inf`` coming from ``log(0)``, so those examples contribute
exactly nothing to any gradient; only the examples whose label is already in the support move the
weights.  Every gradient is finite and nonzero; nothing raises.

Source: https://infinitelexicon.com/sparsemax ("Sparsemax is a nonlinear activation and a sparse
counterpart to softmax"; "It is designed to produce probability-like outputs that are often
sparse, meaning many components can be exactly zero"; "p_i = max(z_i - tau, 0) for all i").
Adapted: sparsemax written with ``sort`` and ``cumsum`` (torch has none) as the output layer of a
``Linear(20, 32), Tanh, Linear(32, 5)`` classifier, labels from a random linear teacher over 128
examples, Adam at 1e-3.
"""

import math

import torch
from scenario_kit import FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://infinitelexicon.com/sparsemax"
DESCRIPTION = "log of sparsemax probabilities in NLL: loss inf, out-of-support examples no grad"
ASK = []
MUST = [
    [
        r"log\s?\(?\s?0\)?",
        r"log[^\n]{0,40}(zero|exact(ly)? 0)",
        r"(zero|exact(ly)? 0) probabilit",
        r"\bsupport\b",
        r"sparsemax[^\n]{0,80}(zero|log|\binf)",
        r"(loss|nll)[^\n]{0,40}\binf\b",
        r"\binf\b[^\n]{0,40}loss",
        r"infinite loss",
    ]
]
MUST_NOT = [
    FALSE_OK,
    r"\bnan\b",
    r"\bdead\b",
    r"requires_grad\s*(=|is|was)?\s*False",
    r"not in (the |any )?optimi[sz]er",
]


def sparsemax(z):
    """Projection of each row of ``z`` onto the simplex (Martins and Astudillo, 2016)."""
    zs, _ = z.sort(dim=-1, descending=True)
    k = torch.arange(1, z.size(-1) + 1, dtype=z.dtype)
    cs = zs.cumsum(-1)
    size = ((1 + k * zs) > cs).sum(-1, keepdim=True)  # the support's size
    tau = (cs.gather(-1, size - 1) - 1) / size
    return torch.clamp(z - tau, min=0), tau


def model_and_data():
    g = torch.Generator().manual_seed(1)
    x = torch.randn(128, 20, generator=g)
    y = (x @ torch.randn(20, 5, generator=g)).argmax(1)
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(20, 32), nn.Tanh(), nn.Linear(32, 5))
    return model, x, y


def nll_of_log(model, x, y):
    p, _ = sparsemax(model(x))
    return F.nll_loss(torch.log(p), y, reduction="none"), p


def step(watch):
    model, x, y = model_and_data()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    with watch(model) as w:
        optimizer.zero_grad()
        per_example, p = nll_of_log(model, x, y)
        loss = per_example.mean()
        loss.backward()
        grads = {n: g.grad.detach().clone() for n, g in model.named_parameters()}
        optimizer.step()
    # the same loss over the examples whose label is in the support only, from the start
    start, _, _ = model_and_data()
    inside = p.detach().gather(1, y[:, None]).squeeze(1) > 0
    part = nll_of_log(start, x, y)[0][inside].sum() / len(y)
    names = [n for n, _ in start.named_parameters()]
    inside_grads = dict(
        zip(names, torch.autograd.grad(part, list(start.parameters())), strict=True)
    )
    return Run(w=w, loss=loss.item(), inside=inside, grads=grads, inside_grads=inside_grads)


def truth(run):
    assert math.isinf(run.loss) and run.loss > 0
    assert 0 < int(run.inside.sum()) < len(run.inside)  # some labels outside the support
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
        assert torch.allclose(g, run.inside_grads[n], rtol=1e-5, atol=1e-8), n
