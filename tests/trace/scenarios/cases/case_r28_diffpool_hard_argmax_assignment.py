"""DiffPool with the cluster assignment made hard: ``S = one_hot(argmax(GNN_pool(A, X)))``, each
node put in exactly one of 3 clusters, then ``X' = S^T Z`` and ``A' = S^T A S`` as in the soft
version.  The arg-max is an integer: nothing flows back to the pooling GNN's logits.  The pooling
GNN's weight and bias get no gradient (``.grad`` stays ``None``) and never move; the embedding GNN,
the second GNN and the head train.  Nothing raises, every gradient that exists is finite.

Source: https://alessioborgi.github.io/blog/gnn/diffpool/ ("S^{(l)} = softmax( GNN_{pool}^{(l)}(
A^{(l)}, H^{(l)} ) )"; "H^{(l+1)} = S^{(l)T} Z^{(l)}"; "A^{(l+1)} = S^{(l)T} A^{(l)} S^{(l)}"; "Hard
assignment (each node assigned to exactly one cluster) would require argmax - not differentiable.
Soft assignment (each node fractionally assigned to all clusters) allows end-to-end gradient
flow").  Adapted: 16 graphs of 10 nodes (rings with chords against pairs of cliques, the class to
tell), dense one-layer GCNs (``Linear(5, 16)`` embedding, ``Linear(5, 3)`` pooling, ``Linear(16,
16)`` after pooling, ``Tanh``), a mean readout over the clusters, ``Linear(16, 2)`` head, Adam at
1e-2.
"""

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://alessioborgi.github.io/blog/gnn/diffpool/"
DESCRIPTION = "DiffPool S = one_hot(argmax(pool logits)): the pooling GNN gets no gradient"
ASK = ["pool.weight"]
MUST = [
    [r"\bpool\b", r"pool\.(weight|bias)"],
    [
        r"argmax",
        r"arg-?max",
        r"one[_ -]?hot",
        r"hard (assignment|cluster\w*)",
        r"integer",
        r"\bint64\b|\blong\b",
        r"(not|non-?)\s?differentiable",
    ],
]
MUST_NOT = [
    FALSE_OK,
    CLAIMS_NONFINITE,
    r"not in (the |any )?optimi[sz]er",
    r"requires_grad\s*(=|is|was)?\s*False",
    r"\bno_grad\b",
]
NODES, CLUSTERS = 10, 3


def normalise(a):
    a = a + torch.eye(a.shape[-1])
    d = a.sum(-1).rsqrt()
    return d[..., :, None] * a * d[..., None, :]


def graphs():
    g = torch.Generator().manual_seed(1)
    adj, label = [], []
    for k in range(16):
        a = torch.zeros(NODES, NODES)
        if k % 2 == 0:  # a ring with two chords
            for i in range(NODES):
                a[i, (i + 1) % NODES] = 1.0
            i, j = torch.randint(0, NODES, (2,), generator=g).tolist()
            a[i, (i + 3) % NODES] = a[j, (j + 5) % NODES] = 1.0
        else:  # two cliques of five joined by one edge
            a[:5, :5] = 1.0
            a[5:, 5:] = 1.0
            a[4, 5] = 1.0
            a.fill_diagonal_(0.0)
        adj.append(((a + a.T) > 0).float())
        label.append(k % 2)
    adj = torch.stack(adj)
    x = torch.cat([adj.sum(-1, keepdim=True) / 4, torch.randn(16, NODES, 4, generator=g)], -1)
    return adj, x, torch.tensor(label)


class DiffPoolNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Linear(5, 16)
        self.pool = nn.Linear(5, CLUSTERS)
        self.gnn2 = nn.Linear(16, 16)
        self.head = nn.Linear(16, 2)

    def forward(self, adj, x, hard):
        a_hat = normalise(adj)
        z = torch.tanh(a_hat @ self.embed(x))
        logits = a_hat @ self.pool(x)
        s = F.one_hot(logits.argmax(-1), CLUSTERS).float() if hard else logits.softmax(-1)
        x2 = s.transpose(1, 2) @ z
        a2 = s.transpose(1, 2) @ adj @ s
        h = torch.tanh(normalise(a2) @ self.gnn2(x2))
        return self.head(h.mean(1)), s


def step(watch, hard=True):
    torch.manual_seed(0)
    model = DiffPoolNet()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    adj, x, y = graphs()
    before = {n: p.detach().clone() for n, p in model.named_parameters()}
    with watch(model) as w:
        optimizer.zero_grad()
        out, s = model(adj, x, hard)
        loss = F.cross_entropy(out, y)
        if not hard:  # the auxiliary link-prediction and entropy losses
            link = (adj - s @ s.transpose(1, 2)).pow(2).sum((1, 2)).sqrt().mean() / NODES
            entropy = -(s * s.clamp_min(1e-12).log()).sum(-1).mean()
            loss = loss + link + entropy
        loss.backward()
        optimizer.step()
    return Run(w=w, model=model, before=before, s=s.detach(), hard=hard)


def truth(run):
    assert run.hard and set(run.s.unique().tolist()) <= {0.0, 1.0}
    params = dict(run.model.named_parameters())
    for n in ("pool.weight", "pool.bias"):
        assert params[n].grad is None and torch.equal(params[n].detach(), run.before[n]), n
    for n in ("embed.weight", "embed.bias", "gnn2.weight", "gnn2.bias", "head.weight", "head.bias"):
        g = params[n].grad
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
        assert not torch.equal(params[n].detach(), run.before[n]), n
