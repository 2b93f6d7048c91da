"""The control of ``edl_relu_evidence_dead_zone``: the same evidential classifier and loss with
the evidence ``softplus(logits)``, positive and smooth everywhere, so that every logit of every
example gets a nonzero gradient and every class can gain evidence; every gradient is finite and
nonzero.

Source: https://alphaxiv.org/overview/1806.01768v3 ("EDL treats network outputs as 'evidence'
values that parameterize a Dirichlet distribution over possible class probability vectors";
"Instead of using softmax to produce class probabilities").  Adapted: the bug's network, data and
loss with ``softplus`` as the evidence activation (the stored overview names none).
"""

import torch
from case_r24_edl_relu_evidence_dead_zone import step as _step
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK
from torch.nn import functional as F

SOURCE = "https://alphaxiv.org/overview/1806.01768v3"
DESCRIPTION = "control: softplus evidence: every logit gets a gradient"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [CLAIMS_NONFINITE, CLAIMS_ERROR, r"\bdead\b", r"all[- ]zero", r"\bzero grad\w*"]


def step(watch):
    return _step(watch, activation=F.softplus)


def truth(run):
    assert bool((run.logits < 0).any())
    assert bool((run.logit_grad != 0).all())
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
