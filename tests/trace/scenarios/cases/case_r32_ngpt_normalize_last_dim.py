"""The control of ``ngpt_normalize_default_dim``: the same nGPT step with the helper
``F.normalize(x, dim=-1)``: every token's hidden state has unit norm, no position reads a later one,
and after Adam's step every matrix is renormalised row by row under ``no_grad``, as nGPT does (its
parameters change outside the optimizer by design).  Every parameter gets a finite, nonzero
gradient.

Source: https://arxiv.org/html/2410.01131v2 ("In nGPT, all vectors forming the embeddings, MLP,
attention matrices and hidden states are unit norm normalized. The input stream of tokens travels on
the surface of a hypersphere, with each layer contributing a displacement towards the target output
predictions").  Adapted: the bug's model, data and optimizer with ``dim=-1``.
"""

import torch
from case_r32_ngpt_normalize_default_dim import step as _step
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = "https://arxiv.org/html/2410.01131v2"
DESCRIPTION = (
    "control: nGPT normalising hidden states with dim=-1, matrices renormalised after step"
)
ASK = []
MUST = [
    [
        HEALTHY_OK,
        r"(re)?normali[sz]\w*[^\n]{0,80}(intended|deliberate|on purpose|by design|as nGPT)",
    ]
]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    r"\bdead\b",
    r"all[- ]zero",
    r"leak\w*",
    r"wrong (dim\w*|axis)",
    r"not in (the |any )?optimi[sz]er",
]


def step(watch):
    return _step(watch, fixed=True)


def truth(run):
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
    assert run.row_norm_error < 1e-5
    assert run.token_norm_error < 1e-5
    assert run.moved == 0.0
