"""Control: the same sparse embedding trained with SparseAdam, the rest of the model with Adam:
the embedding's gradient is sparse, only the rows in the batch move, the other rows and the
step of each optimizer are as intended.

Source: https://cheesebytes.com/cave/sparse-embedding-layer ("When you set sparse=True, PyTorch
only keeps gradients for the indices that were actually used" ... "the embedding matrix is
still dense; only the updates are sparse").
"""

import torch
from case_r3_sparse_embedding_adam import step as _step
from scenario_kit import CLAIMS_ERROR, CLAIMS_NO_ZERO_GRAD, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = "https://cheesebytes.com/cave/sparse-embedding-layer"
DESCRIPTION = "control: sparse embedding with SparseAdam, rest with Adam: used rows move only"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_NO_ZERO_GRAD,
    CLAIMS_ERROR,
    r"all-zero",
    r"(updated|stepped|moved) twice",
    r"held by (two|2|both)",
    r"not (held )?in (the|any) optimizer",
]


def step(watch):
    return _step(watch, sparse_adam=True)


def truth(run):
    assert run.error is None and run.model.embed.weight.grad.is_sparse
    used = torch.zeros(10, dtype=torch.bool)
    used[run.idx.unique()] = True
    rows_moved = (run.model.embed.weight.detach() != run.before[0]).any(1)
    assert torch.equal(rows_moved, used)  # only the rows in the batch moved
    assert not torch.equal(run.model.lin.weight.detach(), run.before[1])
