"""The control of ``muon_newton_schulz_unnormalised``: the same model, data and split, with
``torch.optim.Muon`` on the two hidden matrices (its Newton-Schulz iteration divides the momentum by
its norm first, so the spectral norm is at most 1) and AdamW on the rest.  Both steps' losses and
gradients are finite and nonzero, and both hidden matrices stay finite.

Source:
https://melakarnets.com/proxy/index.php?q=https%3A%2F%2Fgithub.com%2Fpytorch%2Fpytorch%2Fpull%2F159465
(a copy of PyTorch's pull request "Introduce Muon optimizer to PyTorch #159465": "Thanks for taking
this on and adding test cases + a benchmark!"; "One more thing is whether you've checked that the
correctness of this implementation matches the moonshot one").  Adapted: the bug's model, data and
AdamW with ``torch.optim.Muon(lr=0.02, momentum=0.95, weight_decay=0.0)`` (Nesterov momentum, its
default).
"""

import math

import torch
from case_r31_muon_newton_schulz_unnormalised import step as _step
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = (
    "https://melakarnets.com/proxy/index.php?q=https%3A%2F%2Fgithub.com%2Fpytorch%2Fpytorch%2Fpull"
    "%2F159465"
)
DESCRIPTION = "control: torch.optim.Muon on the hidden matrices, AdamW on the rest: finite"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    r"\bdead\b",
    r"all[- ]zero",
    r"explod\w*",
    r"not in (the |any )?optimi[sz]er",
]


def step(watch):
    return _step(watch, library=True)


def truth(run):
    assert all(math.isfinite(v) for v in run.losses)
    for grads in run.grads:
        for n, g in grads.items():
            assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
    for h in run.weights[-1]:
        assert bool(torch.isfinite(h).all())
