"""A two-layer graph network: a GCN layer with the symmetric normalisation
``D^-1/2 A D^-1/2`` written densely, then a mean-aggregation layer built with ``index_add_``.  The
graph has an isolated node (no edge, no self-loop): its degree is 0, ``deg.pow(-0.5)`` is inf,
and ``inf * 0`` in the normalised adjacency is NaN, so the first layer's output is NaN for every
node, the loss is NaN and every gradient NaN.

Source: https://discuss.dgl.ai/t/sym-normalization-of-adj-matrix/1313 ("degs =
graph.in_degrees().float().clamp(min=1)", answer: "In case there are isolated nodes, it replaces
0-valued entries by 1-valued entries"); the step leaves the clamp out.
"""

import torch
from scenario_kit import FALSE_OK, Run
from torch import nn

SOURCE = "https://discuss.dgl.ai/t/sym-normalization-of-adj-matrix/1313"
DESCRIPTION = "GCN D^-1/2 A D^-1/2 without clamp, an isolated node: deg^-0.5 inf, NaN forward"
ASK = []
MUST = [
    [r"\bnan\b", r"non-?finite", r"\binf\b"],
    [r"\bgcn\b", r"PowBackward", r"\bpow\b", r"MulBackward", r"MmBackward", r"forward"],
]
MUST_NOT = [FALSE_OK, r"learning rate", r"explod", r"\boverflow"]

EDGES = torch.tensor([[0, 1, 1, 2, 2, 3, 3, 4, 0, 4], [1, 0, 2, 1, 3, 2, 4, 3, 4, 0]])
N = 6  # node 5 has no edge


class GCNLayer(nn.Module):
    def __init__(self, d_in, d_out, clamp: bool):
        super().__init__()
        self.lin = nn.Linear(d_in, d_out)
        self.clamp = clamp

    def forward(self, x, adj):
        deg = adj.sum(1)
        if self.clamp:
            deg = deg.clamp(min=1)
        d = deg.pow(-0.5)
        return (d[:, None] * adj * d[None, :]) @ self.lin(x)


class MeanAggregate(nn.Module):
    def __init__(self, d_in, d_out):
        super().__init__()
        self.self_linear, self.neighbor_linear = nn.Linear(d_in, d_out), nn.Linear(d_in, d_out)

    def forward(self, x, edge_index):
        src, dst = edge_index
        summed = torch.zeros_like(x).index_add_(0, dst, x[src])
        degree = torch.zeros(x.shape[0]).index_add_(0, dst, torch.ones(dst.shape[0]))
        neighbors = summed / degree.clamp_min(1).unsqueeze(1)
        return self.self_linear(x) + self.neighbor_linear(neighbors)


class Net(nn.Module):
    def __init__(self, clamp: bool):
        super().__init__()
        self.gcn = GCNLayer(4, 8, clamp)
        self.mp = MeanAggregate(8, 2)

    def forward(self, x, adj, edge_index):
        return self.mp(torch.relu(self.gcn(x, adj)), edge_index)


def step(watch, clamp: bool = False):
    torch.manual_seed(0)
    model = Net(clamp)
    adj = torch.zeros(N, N)
    adj[EDGES[0], EDGES[1]] = 1.0
    g = torch.Generator().manual_seed(1)
    x, y = torch.randn(N, 4, generator=g), torch.randint(0, 2, (N,), generator=g)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    with watch(model) as w:
        optimizer.zero_grad()
        loss = nn.functional.cross_entropy(model(x, adj, EDGES), y)
        loss.backward()
        optimizer.step()
    grads = {n: p.grad.clone() for n, p in model.named_parameters()}
    return Run(w=w, loss=loss.item(), grads=grads)


def truth(run):
    assert run.loss != run.loss  # NaN
    assert bool(torch.isnan(run.grads["gcn.lin.weight"]).all())
    assert bool(torch.isnan(run.grads["mp.self_linear.weight"]).any())
