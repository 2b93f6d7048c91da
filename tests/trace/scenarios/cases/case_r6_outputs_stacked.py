"""Control: the same two outputs gathered with ``torch.stack`` (which keeps the graph), the same
matrix product and backward: every parameter gets a finite, nonzero gradient.

Source: https://discuss.pytorch.org/t/gradient-is-lost-when-use-torch-tensor-t1-t2/23261 (the
question's own working form keeps the outputs in the graph; ``torch.stack`` does so for a vector).
"""

import torch
from case_r6_outputs_rebuilt_with_torch_tensor import step as _step
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = "https://discuss.pytorch.org/t/gradient-is-lost-when-use-torch-tensor-t1-t2/23261"
DESCRIPTION = "control: torch.stack([cos_a, cos_b]) keeps the graph: every gradient nonzero"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [CLAIMS_ERROR, CLAIMS_NONFINITE]


def step(watch):
    return _step(watch, stack=True)


def truth(run):
    assert run.error is None
    for p in run.model.parameters():
        assert p.grad is not None and bool(torch.isfinite(p.grad).all())
        assert bool(p.grad.abs().sum() > 0)
