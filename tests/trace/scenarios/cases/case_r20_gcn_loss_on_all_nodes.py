"""Semi-supervised node classification with a GCN where only 12 of the 40 nodes have labels, and
the loss is taken over every node: the label vector holds a placeholder 0 for the 28 unlabeled
nodes, and ``F.nll_loss(out, labels)`` is computed without the training mask.  The model is trained
to put every unlabeled node in class 0 (18 of them belong to another class), and the labeled nodes
weigh 12/40 of the loss instead of all of it: the gradient is not the masked loss's.  Every
gradient is finite and nonzero; nothing raises, so the step looks healthy.

Source: https://discuss.dgl.ai/t/a-general-question-about-masking-in-graph-neural-networks/372
("graph neural networks such as Graph Convolutional Networks can be trained to predict node labels
using semi-supervised learning by masking the labels of some nodes"; "For making predictions on
node labels, should I pass the graph to the network with masked labels and the compare the
predictions to the ground truth?"; "we have few large graphs where only a subset of nodes have
labels").  Adapted: a random 40-node graph (3 classes, 8 features, symmetric normalised adjacency
with self-loops, dense), the apxml course's simplified GCN (``adj @ x``, ``Linear(8, 16)``,
``Tanh`` in place of ReLU, no dropout, ``Linear(16, 3)``, ``log_softmax``), Adam at 0.01.
"""

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://discuss.dgl.ai/t/a-general-question-about-masking-in-graph-neural-networks/372"
DESCRIPTION = "GCN node classification: loss over all nodes, unlabeled ones given placeholder 0"
ASK = []
MUST = [
    [
        r"\bmask\w*",
        r"unlabel\w*",
        r"all (\d+ )?nodes",
        r"every node",
        r"placeholder",
        r"(class|label) 0\b",
    ]
]
MUST_NOT = [FALSE_OK, CLAIMS_NONFINITE]
N, TRAIN = 40, 12


class GCN(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(8, 16)
        self.fc2 = nn.Linear(16, 3)

    def forward(self, x, adj):
        x = adj @ x  # a simplified propagation rule: Â X W
        x = torch.tanh(self.fc1(x))
        return F.log_softmax(self.fc2(x), dim=1)


def graph():
    g = torch.Generator().manual_seed(1)
    labels = torch.randint(0, 3, (N,), generator=g)
    x = torch.randn(N, 8, generator=g) + 1.5 * F.one_hot(labels, 8).float()
    same = labels[:, None] == labels[None, :]
    p = torch.where(same, torch.tensor(0.3), torch.tensor(0.05))
    a = (torch.rand(N, N, generator=g) < p).float().triu(1)
    a = a + a.T + torch.eye(N)
    d = a.sum(1).rsqrt()
    adj = d[:, None] * a * d[None, :]
    train_mask = torch.zeros(N, dtype=torch.bool)
    train_mask[torch.randperm(N, generator=g)[:TRAIN]] = True
    return x, adj, labels, train_mask


def step(watch, masked=False):
    torch.manual_seed(0)
    model = GCN()
    start = {n: p.detach().clone() for n, p in model.named_parameters()}
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
    x, adj, labels, train_mask = graph()
    known = torch.where(train_mask, labels, torch.zeros_like(labels))  # 0 where no label is known
    with watch(model) as w:
        optimizer.zero_grad()
        out = model(x, adj)
        if masked:  # noqa: SIM108  (the training nodes only)
            loss = F.nll_loss(out[train_mask], labels[train_mask])
        else:  # every node, the unlabeled ones with their placeholder 0
            loss = F.nll_loss(out, known)
        loss.backward()
        grads = {n: p.grad.detach().clone() for n, p in model.named_parameters()}
        optimizer.step()
    return Run(w=w, model=model, start=start, grads=grads, masked=masked, x=x, adj=adj,
               labels=labels, known=known, train_mask=train_mask)  # fmt: skip


def masked_grads(run):
    ref = GCN()
    ref.load_state_dict(run.start)
    out = ref(run.x, run.adj)
    loss = F.nll_loss(out[run.train_mask], run.labels[run.train_mask])
    names = [n for n, _ in ref.named_parameters()]
    return dict(zip(names, torch.autograd.grad(loss, list(ref.parameters())), strict=True))


def truth(run):
    assert not run.masked
    unlabeled = ~run.train_mask
    assert int(unlabeled.sum()) == N - TRAIN and bool((run.known[unlabeled] == 0).all())
    assert int((run.labels[unlabeled] != 0).sum()) > 10  # trained towards a wrong class
    ref = masked_grads(run)
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
        assert not torch.allclose(g, ref[n], atol=1e-4), n  # not the masked loss's gradient
