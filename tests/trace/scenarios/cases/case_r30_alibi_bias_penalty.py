"""The control of ``alibi_bias_sign_flipped``: the same causal language model with the ALiBi bias as
the paper writes it, ``-m * (i - j)``, a penalty growing with the distance.  The steepest head
attends to the recent tokens (the last query gives the first token a weight of 7e-4 and the last
four about 0.64), and the model trains on finite, nonzero gradients.

Source: https://hexdocs.pm/edifice/Edifice.Blocks.ALiBi.html ("Replaces positional embeddings with a
simple linear bias added to attention scores. Each attention head gets a different slope, creating
head-specific position sensitivity"; "attention(Q, K) = softmax(QK^T / sqrt(d) + m *
distance_matrix) where m is a head-specific slope and distance_matrix[i,j] = -(|i - j|)"; "Slopes
are geometric: m_i = 2^(-8i/n_heads) for i = 1..n_heads"; ":causal - Use causal (lower-triangular)
distances (default: true)").  Adapted: the bug's model, data and optimizer with this bias.
"""

import torch
from case_r30_alibi_bias_sign_flipped import step as _step
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = "https://hexdocs.pm/edifice/Edifice.Blocks.ALiBi.html"
DESCRIPTION = "control: ALiBi bias -m (i - j) under a causal mask: recent keys favoured"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    r"\bdead\b",
    r"all[- ]zero",
    r"sign\w*[^\n]{0,40}(flip\w*|wrong|invert\w*|revers\w*)",
    r"not in (the |any )?optimi[sz]er",
]


def step(watch):
    return _step(watch, sign=-1.0)


def truth(run):
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
    last = run.attn[:, 0, -1]
    assert float(last[:, 0].mean()) < 0.01
    assert float(last[:, -4:].sum(-1).mean()) > 0.5
