"""The control of ``t5_bias_table_per_layer_unused``: the same T5-style encoder built as T5 builds
it, with a relative position bias table in the first layer only; the later layers reuse the first
layer's ``position_bias``, and the table's gradient is the sum over the three layers' scores.  Every
parameter gets a finite, nonzero gradient on both steps and moves.

Source: https://crackedaicode.com/problems/flax-t5-relative-pos ("T5 (Raffel et al. 2020) introduced
a compact, learned relative position bias: each (query_pos, key_pos) pair maps to one of num_buckets
bucket indices, and the model learns one scalar per bucket per head"; "half the buckets are EXACT
for small distances, the rest are LOGARITHMICALLY spaced up to max_distance").  Adapted: the bug's
encoder and data with one table.
"""

import torch
from case_r30_t5_bias_table_per_layer_unused import step as _step
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = "https://crackedaicode.com/problems/flax-t5-relative-pos"
DESCRIPTION = (
    "control: T5 encoder, one bias table in layer 0 shared by all layers: all params train"
)
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    r"\bdead\b",
    r"all[- ]zero",
    r"not in (the |any )?optimi[sz]er",
    r"(no|without a?) grad",
]


def step(watch):
    return _step(watch, table_in_every_layer=False)


def truth(run):
    names = [n for n, _ in run.model.named_parameters()]
    assert "layers.1.rel_bias.weight" not in names
    for g in run.grads:
        for n, t in g.items():
            assert t is not None and bool(torch.isfinite(t).all()) and bool(t.abs().sum() > 0), n
    for n, p in run.model.named_parameters():
        assert not torch.equal(p.detach(), run.before[n]), n
