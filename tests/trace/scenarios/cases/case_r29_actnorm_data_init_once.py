"""The control of ``actnorm_data_init_every_forward``: the same Glow-style flow with the ActNorm
flag a registered buffer set to 1 after the first forward, so the data-dependent initialization
runs once, on the first batch, and from then on ``loc`` and ``logs`` are ordinary parameters that
Adam trains.  The second step's forward reads them as the first step's update left them.  Every
gradient is finite and nonzero, the loss falls.  The initialization's ``.data`` copies under
``no_grad`` inside the first forward are part of the recipe.

Source: https://apxml.com/courses/intro-normalizing-flows/chapter-4-coupling-architectures/actnorm-invertible-convolutions
("ActNorm addresses this limitation by applying an affine transformation using scale and bias
parameters initialized based on the first batch of data"; "During the very first forward pass, and
are initialized such that the output activations have a mean of zero and a variance of one across
the given batch. After this initial step, and are treated as regular trainable parameters
independent of batch statistics").  Adapted: the bug's flow, data and optimizer with the flag a
``uint8`` buffer filled with 1 after the initialization.
"""

import math

import torch
from case_r29_actnorm_data_init_every_forward import step as _step
from scenario_kit import CLAIMS_ERROR, CLAIMS_NO_ZERO_GRAD, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = (
    "https://apxml.com/courses/intro-normalizing-flows/chapter-4-coupling-architectures/"
    "actnorm-invertible-convolutions"
)
DESCRIPTION = "control: ActNorm data-dependent init once (buffer flag), then trained by Adam"
ASK = []
MUST = [[HEALTHY_OK, r"initiali[sz]\w*[^\n]{0,60}(once|first)"]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    CLAIMS_NO_ZERO_GRAD,
    r"overwr\w*",
    r"(update|step)\w*[^\n]{0,60}(lost|undone|discarded|overwritten|thrown away)",
    r"all[- ]zero",
    r"\bdead\b",
]


def step(watch):
    return _step(watch, once=True)


def truth(run):
    assert all(math.isfinite(v) for v in run.losses) and run.losses[1] < run.losses[0]
    for g in run.grads:
        for n, t in g.items():
            assert bool(torch.isfinite(t).all()) and bool(t.abs().sum() > 0), n
    for n in run.norms:  # the second forward reads what the first step left
        assert not torch.equal(run.after_step[0][n], run.at_forward[0][n]), n
        assert torch.equal(run.at_forward[1][n], run.after_step[0][n]), n
    assert not torch.allclose(run.at_forward[1]["norm1.loc"], run.x2_loc, atol=1e-4)
