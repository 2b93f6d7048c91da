"""The control of ``ntm_memory_write_in_place``: the same neural Turing machine with the write made
out of place, ``M_t = M_(t-1) * (1 - w e^T) + w a^T``, a new tensor per step, so each read's saved
memory is left as it was.  The loss backpropagates through the five steps' reads and writes; every
parameter gets a finite, nonzero gradient and moves.

Source: https://cjlovering.github.io/posts/neural-turing/index.html ("The read operation is a
weighted sum of the stateful memory"; "The write is more complicated; it uses something akin to the
gating mechanism in an LSTM to update memory positions. The update is applied across all of its
memory, but again, the update is controlled using the same mask as above").  Adapted: the bug's
machine, data and optimizer with the out-of-place write.
"""

import torch
from case_r29_ntm_memory_write_in_place import step as _step
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = "https://cjlovering.github.io/posts/neural-turing/index.html"
DESCRIPTION = "control: NTM write M = M * (1 - w e^T) + w a^T out of place: trains"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    r"in-?place",
    r"all[- ]zero",
    r"\bdead\b",
    r"not in (the |any )?optimi[sz]er",
]


def step(watch):
    return _step(watch, in_place=False)


def truth(run):
    assert run.error is None
    for n, p in run.model.named_parameters():
        g = run.grads[n]
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
        assert not torch.equal(p.detach(), run.before[n]), n
