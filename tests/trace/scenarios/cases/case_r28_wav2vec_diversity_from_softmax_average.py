"""The control of ``wav2vec_diversity_from_hard_code_counts_nan``: the same wav2vec 2.0 step with
the diversity loss on the average softmax of the quantizer's logits over the batch, ``p_bar =
mean(softmax(logits))`` per codebook, and ``1 / (G V) sum p_bar log p_bar`` (minus the normalised
entropy).  No entry of ``p_bar`` is 0, the term is finite and has a graph: it pushes the quantizer's
logits toward an even use of the entries, on top of the contrastive loss.  Every gradient is
finite and nonzero.

Source: https://wiki.alexanderbaur.de/Wiki/Models/Wav2Vec%202.0 ("Additionally, a diversity loss
encourages the equal useage of the speech units. Speech units are vectors drawn from one of G
codebooks with V entries each. The diversity loss maximizes the entropy of the average softmax
distribution of each codebook"; "The total loss amounts to L = L_m + L_d").  Adapted: the bug's
model, data and optimizer with the diversity term on the softmax average, weighted 0.1.
"""

import math

import torch
from case_r28_wav2vec_diversity_from_hard_code_counts_nan import step as _step
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = "https://wiki.alexanderbaur.de/Wiki/Models/Wav2Vec%202.0"
DESCRIPTION = "control: wav2vec diversity loss on the batch-average softmax: finite, has a graph"
ASK = []
MUST = [[HEALTHY_OK, r"unused (code|entr)\w*|codebook"]]
MUST_NOT = [CLAIMS_NONFINITE, CLAIMS_ERROR, r"all[- ]zero", r"\bdead\b", r"argmax"]


def step(watch):
    return _step(watch, hard=False)


def truth(run):
    assert math.isfinite(run.l_d) and math.isfinite(run.loss) and run.l_d_has_graph
    assert run.l_d < 0  # minus the normalised entropy
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
