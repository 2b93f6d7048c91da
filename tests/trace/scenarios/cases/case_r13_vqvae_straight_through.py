"""Control: the same VQ-VAE with the straight-through estimator: the decoder gets ``z_e + (z_q -
z_e).detach()``, whose value is ``z_q`` and whose gradient with respect to ``z_e`` is the identity,
so the reconstruction's gradient is copied past the ``argmin`` onto the encoder; the codebook
learns from the codebook term, the encoder from the reconstruction plus the commitment term.  The
codebook starts near the encoder's first 8 outputs (plus noise of 0.05), so every code is some
example's nearest and every codebook row gets a gradient.  Finite, nonzero gradients everywhere: a healthy step.

Source: https://willjhliang.github.io/notes/Deep-Learning/Generative-Modeling/%F0%9F%94%AA-VQ-VAE
("since it's impossible to mathematically pass the decoder gradient past the quantization step to
the encoder, we approximate it by simply copying the gradient over, skipping the quantization
step"; "commitment loss (to move encoder output toward embedding vectors, preventing
divergence)").
"""

import torch
from case_r13_vqvae_no_straight_through import K
from case_r13_vqvae_no_straight_through import step as _step
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = "https://willjhliang.github.io/notes/Deep-Learning/Generative-Modeling/%F0%9F%94%AA-VQ-VAE"
DESCRIPTION = "control: VQ-VAE with z_e + (z_q - z_e).detach(): encoder gets the reconstruction"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    r"all-zero",
    r"\bzero gradient",
    r"no gradient",
    r"dead (units?|relu|neurons?|codes?)",
    r"straight[- ]through[^\n]{0,30}(missing|absent|not used)",
]


def step(watch):
    return _step(watch, straight_through=True)


def truth(run):
    # the reconstruction reaches the encoder: its gradient is more than the commitment term's
    assert all(g is not None for g in run.recon_enc)
    enc = [run.grads[n] for n in ("enc.0.weight", "enc.0.bias", "enc.2.weight", "enc.2.bias")]
    assert any(
        not torch.allclose(got, c, rtol=1e-3) for got, c in zip(enc, run.commit_enc, strict=True)
    )
    assert len(set(run.idx.tolist())) == K
    for n, gr in run.grads.items():
        assert bool(torch.isfinite(gr).all()), n
        assert bool((gr.abs().sum(-1) > 0).all()) if gr.dim() == 2 else bool(gr.abs().sum() > 0), n
    assert all(run.moved.values())
