"""The control of ``deepfm_separate_tables_zero_init``, a healthy step that looks broken on its
first iteration: the same DeepFM with one embedding table shared by the FM and the deep part, as
DeepFM is defined, still initialised to zero.  On the first step the FM's second-order term gives
the table no gradient (it is quadratic in the factors) and the deep network's first layer gets
exactly zero (its input, the embeddings, is zero), but the table gets a gradient through that layer
and leaves zero; on the second step every parameter gets a finite, nonzero gradient and the FM term
is live.  Two steps are watched; nothing is wrong.

Source:
https://wixlib.com/document/45b0c_deepfm-a-factorization-machine-based-neural-network-for-ctr-ijcai.html
("Figure 1: Wide & deep architecture of DeepFM. The wide and deep component share the same input raw
feature vector, which enables DeepFM to learn low- and high-order feature interactions
simultaneously from the input raw features"; "DeepFM has a shared input to its 'wide' and 'deep'
parts").  Adapted: the bug's model, data and optimizer with one table.
"""

import torch
from case_r31_deepfm_separate_tables_zero_init import step as _step
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = (
    "https://wixlib.com/document/45b0c_deepfm-a-factorization-machine-based-neural-network-for-ctr"
    "-ijcai.html"
)
DESCRIPTION = "healthy: DeepFM, one zero-init table shared by FM and deep part: live from step 2"
ASK = []
MUST = [[HEALTHY_OK, r"zero[- ]init\w*", r"first step", r"shared (embedding|table)"]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    r"\bdead\b",
    r"requires_grad\s*(=|is|was)?\s*False",
    r"not in (the |any )?optimi[sz]er",
    r"never (move|moved|moves|update|learn|train)",
    r"stuck|fixed point",
]


def step(watch):
    return _step(watch, shared=True)


def truth(run):
    first, second = run.grads
    for n, g in first.items():
        zero = n == "deep.0.weight"
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() == 0) == zero, n
    for n, g in second.items():
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
    assert bool(run.model.embed.weight.abs().sum() > 0)
