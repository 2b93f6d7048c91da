"""The control of ``gat_scores_times_adjacency``: the same dense two-layer GAT with the scores of
non-edges set to ``-inf`` before the softmax (``masked_fill(adj == 0, -inf)``) and a self-loop on
every node, so that each node's attention is a softmax over its neighbourhood ``N(i)`` only: the
weights on non-edges are exactly 0 and each row sums to 1.  Every gradient is finite and nonzero.

Source: https://www.aicassindra.com/blogs/algorithms/graph_attention_networks.html ("e_ij =
LeakyReLU(a^T [W h_i || W h_j])", "alpha_ij = softmax_j(e_ij) over N(i)", "h_i_new = sigma(sum_j
alpha_ij W h_j)"; "Learns which neighbors matter").  Adapted: the bug's network, graph, labels and
optimizer.
"""

import torch
from case_r26_gat_scores_times_adjacency import step as _step
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = "https://www.aicassindra.com/blogs/algorithms/graph_attention_networks.html"
DESCRIPTION = "control: GAT scores of non-edges masked to -inf, softmax over neighbours"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    r"all[- ]zero",
    r"\bzero grad\w*",
    r"\bdead\b",
    r"non-?(edge|neighbou?r)s?[^\n]{0,40}(attend|weight|leak)",
]


def step(watch):
    return _step(watch, masked_fill=True)


def truth(run):
    off = run.adj == 0
    for alpha in run.alphas:
        assert bool((alpha[off] == 0).all()) and bool((alpha[~off] > 0).all())
        assert torch.allclose(alpha.sum(1), torch.ones(len(alpha)))
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
