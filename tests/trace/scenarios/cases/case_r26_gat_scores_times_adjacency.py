"""A dense graph attention layer that restricts attention to the graph by multiplying the scores by
the adjacency matrix before the softmax, ``softmax(e * adj, dim=1)``, instead of setting the
scores of non-edges to ``-inf``.  A non-edge's score becomes 0 and ``exp(0) = 1``: every node
attends to every other node of the graph, neighbours or not, and on this sparse graph most of each
row's attention goes to non-neighbours (the mean weight on non-edges per row is asserted above
0.5).  Every gradient is finite and nonzero; nothing raises.

Source: https://click4ai.perfionixai.com/problems/graph-attention-network ("Graph Attention
Network (GAT) is a type of Graph Neural Network that uses attention mechanisms to weigh the
importance of different neighbors when aggregating node features"; its hint: "Use the formula
X_new = LeakyReLU(softmax(A @ X @ W) @ X)", the adjacency multiplied into the scores before the
softmax).  Adapted: a two-layer dense GAT (Velickovic et al.'s scores ``LeakyReLU(a^T [W h_i ||
W h_j])`` with slope 0.2, 16 hidden features, ELU, 3 classes) on a random graph of 40 nodes with
self-loops and an edge probability of 0.1, labels on 20 of the nodes, Adam at 5e-3.
"""

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://click4ai.perfionixai.com/problems/graph-attention-network"
DESCRIPTION = (
    "GAT softmax(e * adj): non-edges score 0, exp(0) = 1, attention leaks to non-neighbours"
)
ASK = []
MUST = [
    [
        r"non-?(edge|neighbou?r|adjacent)",
        r"not (an? )?(edge|neighbou?r|adjacent|connected)",
        r"-\s?inf",
        r"masked_fill",
        r"(mask|adjacen\w*)[^\n]{0,80}(multipl|before the softmax|softmax)",
        r"(multipl\w*|times)[^\n]{0,60}adjacen\w*",
        r"exp\s?\(0\)",
    ]
]
MUST_NOT = [
    FALSE_OK,
    CLAIMS_NONFINITE,
    r"\bdead\b",
    r"requires_grad\s*(=|is|was)?\s*False",
    r"not in (the |any )?optimi[sz]er",
]
NODES = 40


class GATLayer(nn.Module):
    def __init__(self, fan_in, fan_out, masked_fill):
        super().__init__()
        self.W = nn.Linear(fan_in, fan_out, bias=False)
        self.a_src = nn.Linear(fan_out, 1, bias=False)
        self.a_dst = nn.Linear(fan_out, 1, bias=False)
        self.masked_fill = masked_fill

    def forward(self, h, adj):
        wh = self.W(h)
        e = F.leaky_relu(self.a_src(wh) + self.a_dst(wh).T, 0.2)  # e[i, j]
        # the bug multiplies the scores by the adjacency; the control masks non-edges to -inf
        e = e.masked_fill(adj == 0, float("-inf")) if self.masked_fill else e * adj
        alpha = torch.softmax(e, dim=1)
        return alpha @ wh, alpha


class GAT(nn.Module):
    def __init__(self, masked_fill):
        super().__init__()
        self.layer1 = GATLayer(8, 16, masked_fill)
        self.layer2 = GATLayer(16, 3, masked_fill)

    def forward(self, x, adj):
        h, alpha1 = self.layer1(x, adj)
        out, alpha2 = self.layer2(F.elu(h), adj)
        return out, (alpha1, alpha2)


def graph():
    g = torch.Generator().manual_seed(1)
    upper = (torch.rand(NODES, NODES, generator=g) < 0.1).float().triu(1)
    adj = upper + upper.T + torch.eye(NODES)
    x = torch.randn(NODES, 8, generator=g)
    y = (x[:, :3] + adj @ x[:, :3] / adj.sum(1, keepdim=True)).argmax(1)
    train = torch.arange(NODES) < NODES // 2
    return x, adj, y, train


def step(watch, masked_fill=False):
    torch.manual_seed(0)
    model = GAT(masked_fill)
    optimizer = torch.optim.Adam(model.parameters(), lr=5e-3)
    x, adj, y, train = graph()
    with watch(model) as w:
        optimizer.zero_grad()
        out, alphas = model(x, adj)
        F.cross_entropy(out[train], y[train]).backward()
        grads = {n: p.grad.detach().clone() for n, p in model.named_parameters()}
        optimizer.step()
    return Run(w=w, adj=adj, alphas=[a.detach() for a in alphas], grads=grads)


def truth(run):
    off = run.adj == 0
    assert 0.8 < float(off.float().mean()) < 0.95  # a sparse graph
    for alpha in run.alphas:
        assert bool((alpha[off] > 0).all())
        assert float((alpha * off).sum(1).mean()) > 0.5  # most attention on non-neighbours
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
