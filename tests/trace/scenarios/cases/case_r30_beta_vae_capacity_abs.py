"""The control of ``beta_vae_capacity_without_abs``: the same beta-VAE, data and point of the
schedule with the objective as the paper writes it, ``recon + gamma * |KL - C|``.  With the KL below
the capacity ``C = 5`` nats, the term's gradient with respect to the KL is ``-gamma``: the step
pushes the KL up towards the capacity, as the schedule intends.  Every gradient is finite and
nonzero.

Source: https://www.arxiv-vanity.com/papers/1804.03599/ ("Taking a rate-distortion theory
perspective, we show the circumstances under which representations aligned with the underlying
generative factors of variation of data emerge when optimising the modified ELBO bound in beta-VAE,
as training progresses. From these insights, we propose a modification to the training regime of
beta-VAE, that progressively increases the information capacity of the latent code during
training").  Adapted: the bug's model, data and schedule with ``abs``.
"""

import torch
from case_r30_beta_vae_capacity_without_abs import GAMMA
from case_r30_beta_vae_capacity_without_abs import step as _step
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = "https://www.arxiv-vanity.com/papers/1804.03599/"
DESCRIPTION = "control: beta-VAE capacity term gamma * |KL - C|, KL below C: KL pushed up"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    r"\bdead\b",
    r"all[- ]zero",
    r"collaps\w*",
    r"not in (the |any )?optimi[sz]er",
]


def step(watch):
    return _step(watch, absolute=True)


def truth(run):
    assert run.kl < 5.0
    assert run.kl_grad == -GAMMA
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
