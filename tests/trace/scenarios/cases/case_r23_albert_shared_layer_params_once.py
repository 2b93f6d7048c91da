"""The control of ``albert_shared_layer_params_listed_per_layer``: the same shared six-layer model
with the optimizer built from ``model.parameters()``, which yields each shared tensor once.  The
shared block's gradient is the sum of its six uses, and SGD moves every parameter exactly once by
its learning rate times its gradient; nothing warns.  Every gradient is finite and nonzero.

Source: https://www.muegenai.com/docs/transformers/exploring_bert_variants/bert_variants_i/cross_layer_sharing
("a single set of parameters is learned and then reused across all encoder layers"; "This
approach drastically reduces the total number of parameters in the model while preserving the
overall architectural structure").  Adapted: the bug's embedding, shared residual block and head,
plain SGD at 0.05 over ``model.parameters()``, 64 examples.
"""

import torch
from case_r23_albert_shared_layer_params_listed_per_layer import moves
from case_r23_albert_shared_layer_params_listed_per_layer import step as _step
from scenario_kit import CLAIMS_ERROR, CLAIMS_NO_ZERO_GRAD, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = (
    "https://www.muegenai.com/docs/transformers/exploring_bert_variants/bert_variants_i/"
    "cross_layer_sharing"
)
DESCRIPTION = "control: shared ALBERT block, optimizer over model.parameters(): each tensor once"
ASK = []
MUST = [[HEALTHY_OK, r"shared (weights?|parameters?|block|layer)"]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    CLAIMS_NO_ZERO_GRAD,
    r"all[- ]zero",
    r"\bzero grad\w*",
    r"\bdead\b",
    r"duplicat\w*",
]


def step(watch):
    return _step(watch, per_layer=False)


def truth(run):
    assert run.n_listed == 6 and not run.warned
    for n, k in moves(run).items():
        assert abs(k - 1.0) < 1e-3, (n, k)
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
