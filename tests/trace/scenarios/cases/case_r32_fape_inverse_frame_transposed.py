"""The control of ``fape_rotation_not_transposed``: the same structure head trained with FAPE whose
inverse frame is ``R_i^T (x_j - t_i)`` (``einsum("fji,fpj->fpi", ...)``): the true structure turned
by any global rotation and translation scores exactly as the true structure, about ``sqrt(eps) /
10``.  The loss is finite and every parameter gets a finite, nonzero gradient.

Source: https://github.com/chenxingqiang/alphafold-codecs ("FAPE is the primary structural loss
function in AlphaFold2. It measures the error between predicted and ground truth atom positions in a
way that is invariant to global rotations and translations, by aligning each residue's local
frame"; its ``apply_inverse_frame``: "Apply inverse rigid transformation: R^T @ (points - t)",
``np.einsum('fji,fpj->fpi', rotation, centered)``).  Adapted: the bug's model, data and optimizer
with the transpose.
"""

import torch
from case_r32_fape_rotation_not_transposed import step as _step
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = "https://github.com/chenxingqiang/alphafold-codecs"
DESCRIPTION = "control: FAPE with R^T (x - t), invariant to a global rotation of the prediction"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    r"\bdead\b",
    r"all[- ]zero",
    r"not invariant",
    r"not in (the |any )?optimi[sz]er",
]


def step(watch):
    return _step(watch, transposed=True)


def truth(run):
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
    assert run.exact < 1e-2
    assert abs(run.turned - run.exact) < 1e-4
