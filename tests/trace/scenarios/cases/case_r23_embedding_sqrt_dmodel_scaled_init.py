"""The control of ``embedding_sqrt_dmodel_default_init_saturated``: the same ``lut(x) *
math.sqrt(d_model)`` embedding with the table initialised at N(0, 1 / d_model), the scale the
multiplication was written for, so that the scaled token vectors have unit-variance entries, of
the order of the sinusoidal positions.  The attention scores stay moderate: no softmax row puts
99% of its weight on one token and the mean entropy is 2.1 nats (2.3 for uniform weights over 10
tokens).  Every gradient is finite and nonzero.

Source: https://datascience.stackexchange.com/questions/87906/transformer-model-why-are-word-embeddings-scaled-before-adding-positional-encod/88159
("scales word embeddings by sqrt of embedding dimension before adding positional encodings";
"What is this additional scaling trying to achieve?"; "In the embedding layers, we multiply those
weights by √dmodel").  Adapted: the bug's ``d_model = 32`` encoder with
``nn.init.normal_(lut.weight, std=d_model ** -0.5)``, 32 sequences of 10 tokens, Adam at 1e-3.
"""

import torch
from case_r23_embedding_sqrt_dmodel_default_init_saturated import entropy, peaked
from case_r23_embedding_sqrt_dmodel_default_init_saturated import step as _step
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = (
    "https://datascience.stackexchange.com/questions/87906/transformer-model-why-are-word-"
    "embeddings-scaled-before-adding-positional-encod/88159"
)
DESCRIPTION = "control: embedding * sqrt(d_model) on N(0, 1/d_model) rows: attention not saturated"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    r"all[- ]zero",
    r"\bzero grad\w*",
    r"\bdead\b",
    r"saturat\w*",
    r"vanish\w*",
]


def step(watch):
    return _step(watch, scaled_init=True)


def truth(run):
    assert peaked(run) < 0.1
    assert entropy(run) > 1.5
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
