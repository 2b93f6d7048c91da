"""A VQ-VAE with the straight-through estimator in place but its codebook started from a plain
random draw (``3 * randn + 4``) far from the encoder's outputs, which are of size ~0.5: one code is
nearest to every example, ``argmin`` picks it 64 times out of 64, and the other 7 codebook rows are
never selected.  The codebook term ``||sg[z_e] - e||^2`` only reaches the rows that were picked, so
7 of the 8 rows of ``codebook`` get exactly zero gradient (Adam does not move them either: their
moments stay zero) and every example decodes from the same vector: codebook collapse / dead codes.
The encoder, decoder and the one used code get finite, nonzero gradients.

Source: https://blog.at-find.com/vq-vae ("Common pitfalls: Codebook collapse; ensure usage with
diversity losses or warmup"; "Stabilize codebook learning with EMA and commitment losses").
Adapted: the page names the pitfall; the step makes it with a codebook initialised away from the
data.
"""

import torch
from case_r13_vqvae_no_straight_through import step as _step
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK

SOURCE = "https://blog.at-find.com/vq-vae"
DESCRIPTION = "VQ-VAE codebook far from the data: one code used, 7 of 8 rows zero gradient"
ASK = ["codebook"]
MUST = [
    [
        r"(all-zero|zero) gradient",
        r"gradient[^\n]{0,30}\b(is |was |are |were )?(all |exactly )?(zero|0)\b",
        r"rows?\b[^\n]{0,40}\b(zero|0)\b",
        r"did not move",
    ],
    [
        r"argmin",
        r"nearest",
        r"never (selected|used|picked|chosen)",
        r"not (selected|used|picked|chosen)",
        r"unused",
        r"collaps\w*",
        r"dead (codes?|entries|rows)",
        r"(one|single|1) code",
    ],
]
MUST_NOT = [FALSE_OK, CLAIMS_NONFINITE, r"no_grad", r"not in (the |any )?optimizer"]


def step(watch):
    return _step(watch, straight_through=True, codebook_init="far")


def truth(run):
    used = set(run.idx.tolist())
    assert len(used) == 1
    cb = run.grads["codebook"]
    for k in range(cb.shape[0]):
        if k in used:
            assert bool(cb[k].abs().sum() > 0)
        else:
            assert bool((cb[k] == 0).all()), k
    for n, gr in run.grads.items():
        assert bool(torch.isfinite(gr).all()), n
        if n != "codebook":
            assert bool(gr.abs().sum() > 0), n
