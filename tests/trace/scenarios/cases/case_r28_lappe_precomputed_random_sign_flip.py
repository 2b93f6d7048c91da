"""The control of ``lappe_eigh_in_forward_degenerate_nan``: the same node classifier on the same
ring with the Laplacian encodings computed once, without gradient, and stored as a buffer; at each
step every eigenvector's sign is flipped at random (one sign per eigenvector, the same for every
node), so that the model does not learn one arbitrary sign.  Nothing is differentiated through
``eigh``; every parameter gets a finite, nonzero gradient.

Source: https://alessioborgi.github.io/blog/gnn/laplacian-pe/ ("The Laplacian Positional Encoding
(LapPE) for node v is its row in the matrix U restricted to the first k eigenvectors"; "(We skip u_1
= 1/sqrt(N), the constant eigenvector, as it carries no positional information.)"; "A critical
problem: if u is an eigenvector of L, so is -u"; "Solutions: - Random [sign flipping]").  Adapted:
the bug's ring, features, labels, MLP and optimizer; the encoding of the ring with every edge weight
0.5, stored in a buffer.
"""

import torch
from case_r28_lappe_eigh_in_forward_degenerate_nan import K
from case_r28_lappe_eigh_in_forward_degenerate_nan import step as _step
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = "https://alessioborgi.github.io/blog/gnn/laplacian-pe/"
DESCRIPTION = "control: LapPE computed once into a buffer, a random sign per eigenvector each step"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [CLAIMS_NONFINITE, CLAIMS_ERROR, r"all[- ]zero", r"\bdead\b", r"eigh"]


def step(watch):
    return _step(watch, learn_edges=False)


def truth(run):
    assert "edge_logit" not in run.grads and run.signs.shape == (1, K)
    assert set(run.signs.flatten().tolist()) <= {-1.0, 1.0}
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
