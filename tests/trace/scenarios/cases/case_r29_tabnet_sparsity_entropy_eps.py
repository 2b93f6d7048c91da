"""The control of ``tabnet_sparsity_entropy_no_eps``: the same TabNet-style classifier with the
sparsity regularizer as the paper writes it, ``sum(-M * log(M + eps))`` with ``eps = 1e-15``.  The
masks keep their exact zeros (about two thirds of the entries), each contributing ``0 * log(eps) =
0``; the loss is finite, every parameter gets a finite, nonzero gradient and moves.

Source: https://hexdocs.pm/edifice/Edifice.Feedforward.TabNet.html ("TabNet uses sequential attention
to select which features to reason about at each decision step"; "Attention: select features via
sparse mask M = sparsemax(...)"; "At each step, TabNet uses an attention transformer to produce a
mask that selects relevant input features. The relaxation factor gamma controls how much previously
attended features can be reused").  Adapted: the bug's network, data and optimizer with the
epsilon.
"""

import math

import torch
from case_r29_tabnet_sparsity_entropy_no_eps import step as _step
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = "https://hexdocs.pm/edifice/Edifice.Feedforward.TabNet.html"
DESCRIPTION = "control: TabNet sparsity loss sum(-M log(M + 1e-15)) on sparsemax masks: finite"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    r"all[- ]zero",
    r"\bdead\b",
    r"not in (the |any )?optimi[sz]er",
]


def step(watch):
    return _step(watch, eps=1e-15)


def truth(run):
    assert bool((run.masks == 0).any())
    assert math.isfinite(run.entropy) and math.isfinite(run.loss)
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
    for n, p in run.model.named_parameters():
        assert not torch.equal(p.detach(), run.before[n]), n
