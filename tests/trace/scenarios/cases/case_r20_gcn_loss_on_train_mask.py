"""Control: the same GCN and graph with the loss taken on the training nodes only,
``F.nll_loss(out[train_mask], labels[train_mask])``: the forward still runs over the whole graph
(the unlabeled nodes pass messages), and the gradient is the 12 labeled nodes' average.  Every
gradient is finite and nonzero and equals the masked loss's, taken with ``autograd.grad``.

Source: https://apxml.com/courses/introduction-to-graph-neural-networks/chapter-4-training-gnn-models/training-loop-for-gnns
("The process begins with the forward pass, where we feed the graph data into the GNN"; "A
significant detail in GNN training is that we often compute the loss only on the nodes designated
for training. This is managed using a bool..."; "logits = model(graph.x, graph.edge_index)").
Adapted as the bug.
"""

import torch
from case_r20_gcn_loss_on_all_nodes import masked_grads
from case_r20_gcn_loss_on_all_nodes import step as _step
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = (
    "https://apxml.com/courses/introduction-to-graph-neural-networks/"
    "chapter-4-training-gnn-models/training-loop-for-gnns"
)
DESCRIPTION = "control: GCN loss on the training mask's 12 labeled nodes only: healthy"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [CLAIMS_NONFINITE, CLAIMS_ERROR, r"unlabel\w*", r"placeholder", r"all[- ]zero"]


def step(watch):
    return _step(watch, masked=True)


def truth(run):
    assert run.masked
    ref = masked_grads(run)
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
        assert torch.allclose(g, ref[n], atol=1e-6), n
