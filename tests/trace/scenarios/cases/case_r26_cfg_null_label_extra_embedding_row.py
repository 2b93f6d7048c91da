"""The control of ``cfg_null_label_index_out_of_range``: the same classifier-free guidance step
with the null condition given a row of its own, ``nn.Embedding(11, 32)`` for 10 classes and the
null label 10, a learned unconditional embedding trained with the model.  The dropped examples
read row 10; every class and the null label appear in the batch, so every row of the table and
every other parameter gets a finite, nonzero gradient.

Source: https://github.com/kuangliu/tinydiff ("Train a conditional diffusion model p(x|y) with
conditional dropout: some percentage of time (10-20% tends to work well), the conditioning
information y is removed. In practice, it is often replaced with a special input value
representing the absence of conditioning information").  Adapted: the bug's denoiser, data,
schedule and optimizer, with one more embedding row.
"""

import torch
from case_r26_cfg_null_label_index_out_of_range import CLASSES
from case_r26_cfg_null_label_index_out_of_range import step as _step
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = "https://github.com/kuangliu/tinydiff"
DESCRIPTION = "control: CFG null label 10 on an Embedding(11, .): its own learned row"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    r"out of range",
    r"all[- ]zero",
    r"\bzero grad\w*",
    r"\bdead\b",
]


def step(watch):
    return _step(watch, label_rows=CLASSES + 1)


def truth(run):
    assert run.error is None
    assert set(run.y_in.tolist()) == set(range(CLASSES + 1))  # every row read
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
        assert not torch.equal(run.model.get_parameter(n).detach(), run.before[n]), n
    rows = run.grads["label.weight"].abs().sum(1)
    assert bool((rows > 0).all())
