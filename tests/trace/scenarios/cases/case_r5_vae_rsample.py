"""Control: the same VAE drawing its latent code with ``rsample()`` (the reparameterization
``mu + std * eps``): the reconstruction loss reaches the encoder through ``z`` and every
parameter gets its gradient.

Source: https://github.com/AntixK/PyTorch-VAE/issues/13 ("Is there a reason for manually
implementing reparameterization instead of using the rsample method provided in PyTorch?"; "I'm
pretty sure they are equivalent").
"""

import torch
from case_r5_vae_sample_not_rsample import step as _step
from scenario_kit import CLAIMS_NO_ZERO_GRAD, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = "https://github.com/AntixK/PyTorch-VAE/issues/13"
DESCRIPTION = "control: VAE with rsample(): reconstruction reaches the encoder"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_NO_ZERO_GRAD,
    r"no gradient",
    r"(did not|never) reach",
    r"\bsample\(\)",
]


def step(watch):
    return _step(watch, rsample=True)


def truth(run):
    assert run.z.requires_grad
    assert bool(torch.isfinite(run.grad).all())
    assert not torch.allclose(run.grad, run.kl_only)  # the reconstruction reached the encoder
    for p in run.model.parameters():
        assert p.grad is not None and bool(p.grad.abs().sum() > 0)
