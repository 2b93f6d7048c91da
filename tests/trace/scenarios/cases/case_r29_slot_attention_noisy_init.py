"""The control of ``slot_attention_slots_without_noise``: the same slot attention autoencoder with
the slots drawn as the paper does, ``slots_mu + exp(slots_log_sigma) * randn(B, K, D)``, a
different start per slot and per scene.  The slots differ, the attention over them is not uniform,
and every parameter, ``slots_log_sigma`` and the query and key projections included, gets a finite,
nonzero gradient.  The noise is drawn inside the forward from the seeded global generator.

Source: https://brandf.github.io/MegaContext/reference/papers/Slot-Attention---2006.15055v2
("Slot initialisation: A fixed number of slots are randomly initialised with learned means and
variances, providing symmetry breaking"; "Attention-based assignment: An input-to-slot
cross-attention step assigns feature vectors to slots using softmax-normalised slots (rather than
features), ensuring slots compete for exclusive explanations").  Adapted: the bug's model, scenes
and optimizer with the Gaussian start.
"""

import torch
from case_r29_slot_attention_slots_without_noise import K
from case_r29_slot_attention_slots_without_noise import step as _step
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = "https://brandf.github.io/MegaContext/reference/papers/Slot-Attention---2006.15055v2"
DESCRIPTION = "control: slots = mu + exp(log_sigma) * randn: slots differ, every parameter trains"
ASK = ["slot_attention.slots_log_sigma"]
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    r"identical",
    r"symmetr\w*",
    r"all[- ]zero",
    r"\bdead\b",
    r"not in (the |any )?optimi[sz]er",
]


def step(watch):
    return _step(watch, noise=True)


def truth(run):
    for k in range(1, K):
        assert not torch.allclose(run.slots[:, k], run.slots[:, 0], atol=1e-3), k
    assert float((run.attn - 1 / K).abs().max()) > 1e-3
    for n, g in run.grads.items():
        assert g is not None, n
        assert bool(torch.isfinite(g).all()) and float(g.abs().max()) > 1e-3, n
