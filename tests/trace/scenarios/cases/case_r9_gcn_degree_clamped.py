"""Control: the same two-layer graph network with the degree clamped to 1 before
``pow(-0.5)``, as DGL's GraphConv does: the isolated node's row and column of the normalised
adjacency are 0, its first-layer output is 0 (its own features arrive through the second layer's
self term), and the loss and every gradient are finite and nonzero.

Source: https://discuss.dgl.ai/t/sym-normalization-of-adj-matrix/1313 (``clamp(min=1)``); the
mean aggregation with ``index_add_`` and ``clamp_min(1)`` is
https://learn-pytorch.oneoffcoder.com/message-passing.html's ``aggregate_mean``.
"""

import torch
from case_r9_gcn_isolated_node_inf_norm import step as _step
from scenario_kit import CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = "https://discuss.dgl.ai/t/sym-normalization-of-adj-matrix/1313"
DESCRIPTION = "control: GCN degree clamped to 1, index_add_ mean aggregation: finite, trains"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [CLAIMS_NONFINITE, r"all-zero"]


def step(watch):
    return _step(watch, clamp=True)


def truth(run):
    assert run.loss == run.loss
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
