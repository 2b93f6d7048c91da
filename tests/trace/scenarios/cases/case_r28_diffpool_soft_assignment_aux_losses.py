"""The control of ``diffpool_hard_argmax_assignment``: the same DiffPool network with the soft
assignment ``S = softmax(GNN_pool(A, X))`` row-wise over the 3 clusters, and the paper's two
auxiliary losses added to the classification loss: the link-prediction loss ``||A - S S^T||_F``
(scaled by the number of nodes) and the mean entropy of the assignment rows.  Every parameter,
the pooling GNN's included, gets a finite, nonzero gradient and moves.

Source: https://shagunsodhani.in/papers-I-read/Hierarchical-Graph-Representation-Learning-with-Differentiable-Pooling
("A new GNN, called as GNNpool is used to produce the assignment matrix S by taking a softmax over
GNNpool(Al, Xl)"; "the embedding matrix for the (l+1)th layer is given as transpose(Sl)Zl and
adjancecy matrix is given by transpose(Sl)AlSl"; "The paper uses 2 auxiliary losses to push the
model away from spurious local minima early in the training").  Adapted: the bug's graphs, network
and optimizer with the soft assignment.
"""

import torch
from case_r28_diffpool_hard_argmax_assignment import step as _step
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = (
    "https://shagunsodhani.in/papers-I-read/"
    "Hierarchical-Graph-Representation-Learning-with-Differentiable-Pooling"
)
DESCRIPTION = "control: DiffPool soft assignment softmax over clusters, link + entropy losses"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    r"all[- ]zero",
    r"\bdead\b",
    r"argmax",
    r"never (move|moved|moves|update|learn)",
]


def step(watch):
    return _step(watch, hard=False)


def truth(run):
    assert torch.allclose(run.s.sum(-1), torch.ones(run.s.shape[:-1]))
    assert bool((run.s > 0).all() and (run.s < 1).all())
    for n, p in run.model.named_parameters():
        g = p.grad
        assert g is not None, n
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
        assert not torch.equal(p.detach(), run.before[n]), n
