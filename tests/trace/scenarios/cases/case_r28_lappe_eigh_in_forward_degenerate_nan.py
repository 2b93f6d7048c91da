"""Laplacian positional encodings computed inside the forward, by ``torch.linalg.eigh`` of the
Laplacian of the model's own learned edge weights (``sigmoid`` of one logit per edge, all 0.5 at
the start), on a ring of 12 nodes.  A ring's Laplacian has its non-trivial eigenvalues in equal
pairs (``lambda_m = lambda_(N - m)``); the encoding takes eigenvectors 1 to 4, two such pairs.  The
eigenvectors of a repeated eigenvalue are defined only up to a rotation, and the backward of
``eigh`` divides by the differences of eigenvalues: 0 there.  The edge logits' gradient is NaN in
every entry and Adam writes NaN into them; the node MLP's gradients are finite.  Nothing raises.
Where LAPACK returns a pair unequal in its last bits (seen on an AVX-512 processor) the
gradient is finite and very large instead: the step this case describes does not happen there,
and its truth skips.

Source: https://alessioborgi.github.io/blog/gnn/sign-ambiguity/ ("The sign problem is a special
case of a more general rotation ambiguity. When eigenvalue lambda_k has multiplicity m > 1 (the k-th
eigenspace is m-dimensional), any rotation within that m-dimensional eigenspace is valid"; "For
degenerate eigenvalues (highly symmetric graphs - regular graphs, bipartite graphs), the ambiguity
is a full O(m) rotation").  Adapted: the encoding made differentiable through learned edge weights
(the page computes it once); node features of 4 random numbers, 3 classes by arc of the ring, a node
MLP ``Linear(8, 32), Tanh, Linear(32, 3)``, Adam at 1e-2.
"""

import pytest
import torch
from scenario_kit import FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://alessioborgi.github.io/blog/gnn/sign-ambiguity/"
DESCRIPTION = "LapPE by eigh of learned ring weights in forward: repeated eigenvalues, NaN grads"
ASK = []
MUST = [
    [r"\bnan\b"],
    [
        r"eigh",
        r"eigen\w*",
        r"degenera\w*",
        r"repeated|multiplicit\w*|equal eigenvalues|(eigenvalue|spectral) gap",
        r"linalg",
    ],
]
MUST_NOT = [FALSE_OK, r"\bdead\b", r"requires_grad\s*(=|is|was)?\s*False"]
NODES, K = 12, 4
RING = torch.stack([torch.arange(NODES), (torch.arange(NODES) + 1) % NODES])


def laplacian(weights):
    a = torch.zeros(NODES, NODES).index_put((RING[0], RING[1]), weights)
    a = a + a.T
    return torch.diag(a.sum(1)) - a


class LapPENet(nn.Module):
    def __init__(self, learn_edges=True):
        super().__init__()
        if learn_edges:
            self.edge_logit = nn.Parameter(torch.zeros(NODES))
        else:  # computed once, no gradient: the page's recipe
            _, vectors = torch.linalg.eigh(laplacian(torch.full((NODES,), 0.5)))
            self.register_buffer("pe", vectors[:, 1 : K + 1].clone())
        self.mlp = nn.Sequential(nn.Linear(4 + K, 32), nn.Tanh(), nn.Linear(32, 3))

    def encodings(self):
        if hasattr(self, "edge_logit"):
            values, vectors = torch.linalg.eigh(laplacian(torch.sigmoid(self.edge_logit)))
            self.values = values.detach()
            return vectors[:, 1 : K + 1]
        return self.pe

    def forward(self, x, signs=None):
        pe = self.encodings()
        if signs is not None:  # random sign flip of each eigenvector
            pe = pe * signs
        return self.mlp(torch.cat([x, pe], 1))


def data():
    g = torch.Generator().manual_seed(1)
    return torch.randn(NODES, 4, generator=g), torch.arange(NODES) // 4


def step(watch, learn_edges=True):
    torch.manual_seed(0)
    model = LapPENet(learn_edges)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    x, y = data()
    g = torch.Generator().manual_seed(2)
    signs = None if learn_edges else torch.randint(0, 2, (1, K), generator=g).float() * 2 - 1
    with watch(model) as w:
        optimizer.zero_grad()
        loss = F.cross_entropy(model(x, signs), y)
        loss.backward()
        grads = {n: p.grad.detach().clone() for n, p in model.named_parameters()}
        optimizer.step()
    return Run(w=w, model=model, loss=float(loss.detach()), grads=grads, signs=signs)


def truth(run):
    values = run.model.values
    assert torch.allclose(values[1:3], values[1:3].flip(0), atol=1e-5)  # lambda_1 = lambda_2
    assert torch.allclose(values[3:5], values[3:5].flip(0), atol=1e-5)  # lambda_3 = lambda_4
    assert bool(torch.isfinite(torch.tensor(run.loss)))
    if bool(torch.isfinite(run.grads["edge_logit"]).all()):  # the step did not happen here
        pytest.skip(
            "this processor's LAPACK returned the repeated eigenvalues unequal in their last"
            " bits: eigh's backward is finite (and large) here, not the NaN this step describes"
        )
    assert bool(torch.isnan(run.grads["edge_logit"]).all())
    assert bool(torch.isnan(run.model.edge_logit).all())
    for n, g in run.grads.items():
        if n != "edge_logit":
            assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
