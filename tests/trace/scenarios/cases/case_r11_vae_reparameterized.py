"""Control: the same VAE with the reparameterisation trick, ``z = mu + std * eps`` with ``eps =
torch.randn_like(std)``: the reconstruction loss's gradient reaches ``mu``, ``logvar`` and the
encoder through ``z`` (their gradients differ from the KL term's alone), and every parameter gets
a finite, nonzero gradient.

Source: https://hunterheidenreich.com/posts/modern-variational-autoencoder-in-pytorch ("a complete,
modern VAE implementation in PyTorch ... a custom training step that handles the ELBO loss
correctly"; the sample is drawn by reparameterisation so the encoder is trained through it).
"""

import torch
from case_r11_vae_torch_normal_sampling import ENCODER
from case_r11_vae_torch_normal_sampling import step as _step
from scenario_kit import CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = "https://hunterheidenreich.com/posts/modern-variational-autoencoder-in-pytorch"
DESCRIPTION = "control: VAE z = mu + std * randn_like(std): reconstruction reaches the encoder"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    r"reparameteri[sz]\w*[^\n]{0,40}(missing|not used|absent)",
    r"(mu|logvar|enc)\.[^\n]{0,60}(no gradient|\bNone\b|all-zero)",
]


def step(watch):
    return _step(watch, reparameterize=True)


def truth(run):
    for n, g in run.grads.items():
        assert bool(g.abs().sum() > 0), n
    assert not all(torch.allclose(run.grads[n], run.kl_grads[n], atol=1e-6) for n in ENCODER)
