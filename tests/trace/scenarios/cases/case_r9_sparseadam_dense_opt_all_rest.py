"""Control: the same sparse embedding with ``SparseAdam``, and a dense ``Adam`` over every other
parameter (``named_parameters`` without the embedding): the output layer's weight and bias both
train, the embedding's used rows move.

Source: https://raberrytv.wordpress.com/ ("we need one optimizer for the sparse layers
(Embedding) and one for the rest").
"""

import torch
from case_r9_sparseadam_dense_opt_weight_only import step as _step
from scenario_kit import CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = "https://raberrytv.wordpress.com/"
DESCRIPTION = "control: SparseAdam(emb) + Adam(every other parameter): all train"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [CLAIMS_NONFINITE, r"no optimizer", r"not (held|in)[^\n]{0,40}optimi[sz]er"]


def step(watch):
    return _step(watch, all_dense=True)


def truth(run):
    assert not torch.equal(run.before["out.bias"], run.after["out.bias"])
    assert not torch.equal(run.before["out.weight"], run.after["out.weight"])
    used = run.idx.unique()
    assert not torch.equal(run.before["emb.weight"][used], run.after["emb.weight"][used])
