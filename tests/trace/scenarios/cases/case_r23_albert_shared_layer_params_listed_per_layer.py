"""ALBERT-style cross-layer sharing: one block applied at all six depths (``nn.ModuleList([block]
* 6)``), with the optimizer built from ``[p for layer in model.layers for p in
layer.parameters()]``.  The shared block's weight and bias are listed six times in one parameter
group; torch only warns ("optimizer contains a parameter group with duplicate parameters") and
SGD applies the update once per listing, so the shared parameters move six times as far as their
gradient and learning rate say, while the embedding and head move once.  Every gradient is finite
and nonzero (the shared block's is the sum of its six uses, as it should be); nothing raises.

Source: https://mseyfi.github.io/posts/LLM/ALBERT ("Does every layer in a deep network truly need
its own unique set of weights?"; "they apply the exact same set of tools iteratively"; "The model
learns a general, reus[able]" transformation).  Adapted: a ``Linear(10, 16)`` embedding, one
residual block ``Linear(16, 16)``, ``Tanh`` shared by six layers, a ``Linear(16, 3)`` head, plain
SGD at 0.05 over the per-layer list (the embedding's and head's parameters added once), the
warning recorded as the user's script would print it, 64 examples.
"""

import warnings

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://mseyfi.github.io/posts/LLM/ALBERT"
DESCRIPTION = "shared ALBERT block's params listed once per layer: SGD applies their update 6 times"
ASK = []
MUST = [
    [
        r"duplicat\w*",
        r"(six|6) times",
        r"more than once",
        r"repeated",
        r"(listed|appears?|included) (\w+ )?(twice|multiple|several|more)",
        r"same parameter",
    ],
    [r"optimi[sz]er", r"param(eter)?[_ ]groups?", r"updat\w*", r"\bstep\b"],
]
MUST_NOT = [FALSE_OK, CLAIMS_NONFINITE, r"all[- ]zero", r"\bzero grad\w*"]
LR = 0.05


class SharedNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Linear(10, 16)
        block = nn.Sequential(nn.Linear(16, 16), nn.Tanh())
        self.layers = nn.ModuleList([block] * 6)  # one block, six depths
        self.head = nn.Linear(16, 3)

    def forward(self, x):
        h = self.embed(x)
        for layer in self.layers:
            h = h + layer(h)
        return self.head(h)


def data():
    g = torch.Generator().manual_seed(1)
    x = torch.randn(64, 10, generator=g)
    return x, (x[:, :3] + 0.5 * x[:, 3:6]).argmax(1)


def step(watch, per_layer=True):
    torch.manual_seed(0)
    model = SharedNet()
    if per_layer:
        params = [p for layer in model.layers for p in layer.parameters()]
        params += list(model.embed.parameters()) + list(model.head.parameters())
    else:
        params = list(model.parameters())  # each shared tensor once
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        optimizer = torch.optim.SGD(params, lr=LR)
    x, y = data()
    before = {n: p.detach().clone() for n, p in model.named_parameters()}
    with watch(model) as w:
        optimizer.zero_grad()
        F.cross_entropy(model(x), y).backward()
        grads = {n: p.grad.detach().clone() for n, p in model.named_parameters()}
        optimizer.step()
    return Run(w=w, model=model, before=before, grads=grads, n_listed=len(params),
               warned=[str(c.message) for c in caught])  # fmt: skip


def moves(run):
    """How many learning-rate-times-gradient steps each parameter moved."""
    out = {}
    for n, p in run.model.named_parameters():
        delta = run.before[n] - p.detach()
        out[n] = (delta.norm() / (LR * run.grads[n].norm())).item()
    return out


def truth(run):
    assert run.n_listed == 6 * 2 + 4
    assert any("duplicate parameters" in m for m in run.warned)
    for n, k in moves(run).items():
        expected = 6.0 if n.startswith("layers.") else 1.0
        assert abs(k - expected) < 1e-3 * expected, (n, k)
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
