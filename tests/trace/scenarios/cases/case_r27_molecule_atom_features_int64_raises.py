"""A molecular property GNN whose atom features are built as ``tensor(node_features)`` from Python
lists of atomic numbers, formal charges, hydrogen counts, aromatic flags and hybridisation codes:
the values are ``int`` and ``bool``, so the tensor is ``int64``.  The first layer, a float
``nn.Linear``, raises ``RuntimeError: mat1 and mat2 must have the same dtype, but got Long and
Float`` in the forward; no backward runs, every ``.grad`` stays ``None`` and nothing moves.

Source: https://kumo.ai/pyg/concepts/molecular-property-prediction (``node_features.append([
atom.GetAtomicNum(), atom.GetFormalCharge(), atom.GetNumImplicitHs(), atom.GetIsAromatic(),
atom.GetHybridization(), ])``; ``return Data(x=tensor(node_features), edge_index=tensor(edges).T,
edge_attr=tensor(edge_features))``).  Adapted without RDKit: 12 small molecules (methane, ethanol,
acetic acid, acetate, methylammonium, benzene, pyridine, phenol, acetonitrile, methylamine,
formaldehyde, methanol) written out by hand as atom feature rows (hybridisation codes 2 = sp, 3 =
sp2, 4 = sp3) and bonds; a dense two-layer GCN (``Linear(5, 32)``, ``Tanh``, ``Linear(32, 32)``,
``Tanh``, symmetric normalised adjacency with self-loops over the block-diagonal batch), a sum
readout per molecule and a ``Linear(32, 1)`` head regressing a made-up property; Adam at 1e-3.
"""

import torch
from scenario_kit import FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://kumo.ai/pyg/concepts/molecular-property-prediction"
DESCRIPTION = "atom features tensor(list of ints/bools) is int64: first Linear raises (Long/Float)"
ASK = []
MUST = [
    [r"\braised\b", r"RuntimeError", r"exception", r"\berror\b"],
    [
        r"dtype",
        r"\blong\b",
        r"int64",
        r"integer",
        r"float32|\.float\(\)|torch\.float",
    ],
]
MUST_NOT = [FALSE_OK]
# atoms: (atomic number, formal charge, implicit Hs, aromatic, hybridisation); then bonds
MOLECULES = {
    "methane": ([(6, 0, 4, False, 4)], []),
    "ethanol": ([(6, 0, 3, False, 4), (6, 0, 2, False, 4), (8, 0, 1, False, 4)], [(0, 1), (1, 2)]),
    "acetic acid": (
        [(6, 0, 3, False, 4), (6, 0, 0, False, 3), (8, 0, 0, False, 3), (8, 0, 1, False, 3)],
        [(0, 1), (1, 2), (1, 3)],
    ),
    "acetate": (
        [(6, 0, 3, False, 4), (6, 0, 0, False, 3), (8, 0, 0, False, 3), (8, -1, 0, False, 3)],
        [(0, 1), (1, 2), (1, 3)],
    ),
    "methylammonium": ([(6, 0, 3, False, 4), (7, 1, 3, False, 4)], [(0, 1)]),
    "benzene": ([(6, 0, 1, True, 3)] * 6, [(i, (i + 1) % 6) for i in range(6)]),
    "pyridine": (
        [(7, 0, 0, True, 3)] + [(6, 0, 1, True, 3)] * 5,
        [(i, (i + 1) % 6) for i in range(6)],
    ),
    "phenol": (
        [(6, 0, 0, True, 3)] + [(6, 0, 1, True, 3)] * 5 + [(8, 0, 1, False, 3)],
        [(i, (i + 1) % 6) for i in range(6)] + [(0, 6)],
    ),
    "acetonitrile": (
        [(6, 0, 3, False, 4), (6, 0, 0, False, 2), (7, 0, 0, False, 2)],
        [(0, 1), (1, 2)],
    ),
    "methylamine": ([(6, 0, 3, False, 4), (7, 0, 2, False, 4)], [(0, 1)]),
    "formaldehyde": ([(6, 0, 2, False, 3), (8, 0, 0, False, 3)], [(0, 1)]),
    "methanol": ([(6, 0, 3, False, 4), (8, 0, 1, False, 4)], [(0, 1)]),
}


def batch(dtype=None):
    node_features, edges, graph, offset = [], [], [], 0
    for g, (atoms, bonds) in enumerate(MOLECULES.values()):
        node_features += [list(a) for a in atoms]
        edges += [(offset + i, offset + j) for i, j in bonds]
        graph += [g] * len(atoms)
        offset += len(atoms)
    x = torch.tensor(node_features) if dtype is None else torch.tensor(node_features, dtype=dtype)
    adj = torch.eye(offset)
    for i, j in edges:
        adj[i, j] = adj[j, i] = 1.0
    d = adj.sum(1).rsqrt()
    a_hat = d[:, None] * adj * d[None, :]
    graph = torch.tensor(graph)
    table = torch.tensor([0.0] * 6 + [0.3, -0.4, -0.9])  # by atomic number
    target = torch.zeros(len(MOLECULES)).index_add_(0, graph, table[x[:, 0].long()])
    target += 0.2 * torch.zeros(len(MOLECULES)).index_add_(0, graph, x[:, 3].float())
    return x, a_hat, graph, target[:, None]


class GCN(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin1, self.lin2, self.head = nn.Linear(5, 32), nn.Linear(32, 32), nn.Linear(32, 1)

    def forward(self, x, a_hat, graph):
        h = torch.tanh(a_hat @ self.lin1(x))
        h = torch.tanh(a_hat @ self.lin2(h))
        pooled = torch.zeros(int(graph.max()) + 1, h.shape[1]).index_add(0, graph, h)
        return self.head(pooled)


def step(watch, dtype=None):
    torch.manual_seed(0)
    model = GCN()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    x, a_hat, graph, target = batch(dtype)
    before = {n: p.detach().clone() for n, p in model.named_parameters()}
    error, grads = None, None
    try:
        with watch(model) as w:
            optimizer.zero_grad()
            F.mse_loss(model(x, a_hat, graph), target).backward()
            grads = {n: p.grad.detach().clone() for n, p in model.named_parameters()}
            optimizer.step()
    except RuntimeError as e:
        error = e
    return Run(w=w, model=model, x=x, before=before, grads=grads, error=error)


def truth(run):
    assert run.x.dtype == torch.int64
    assert run.error is not None and "must have the same dtype" in str(run.error)
    for n, p in run.model.named_parameters():
        assert p.grad is None and torch.equal(p.detach(), run.before[n]), n
