"""The control of ``hifigan_disc_step_fake_not_detached``, the HiFi-GAN training order: the
discriminator's optimizer zeroed, its loss on ``y_g_hat.detach()``, its step; then the generator's
optimizer zeroed, the generator's loss (adversarial, feature matching, mel-style L1) backpropagated
and its step.  The generator's ``.grad`` is untouched by the discriminator's pass (``None`` after
it) and holds one backward, its own loss's.  As in the reference code, the generator's backward also
runs through the discriminator and leaves gradients in the discriminator's ``.grad`` after the
discriminator's step; nothing reads them, and the next iteration's ``optim_d.zero_grad()`` clears
them.  Nothing is wrong.

Source: https://anwarvic.github.io/speech-synthesis/HiFi-GAN ("HiFi-GAN consists of one generator
and two discriminators: multi-period discriminator (MPD) and multi-Scale discriminator (MSD). The
generator and discriminators are trained adversarially, along with two additional losses for
improving training stability and model performance").  Adapted: the bug's networks, losses and
optimizers in the reference code's order.
"""

import torch
from case_r30_hifigan_disc_step_fake_not_detached import step as _step
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = "https://anwarvic.github.io/speech-synthesis/HiFi-GAN"
DESCRIPTION = (
    "control: HiFi-GAN D step on y_g_hat.detach(), then G step: G's grad is its own loss's"
)
ASK = []
MUST = [
    [
        HEALTHY_OK,
        r"(disc\w*|\bD\b)[^\n]{0,80}(after|past) (its|the) (last )?step",
        r"(disc\w*|\bD\b)[^\n]{0,80}(not|never) (read|used|stepped)",
    ]
]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    r"\bdead\b",
    r"not in (the |any )?optimi[sz]er",
    r"detach\w*[^\n]{0,40}(missing|forgot\w*)",
    r"(generator|\bG\b)[^\n]{0,60}(two|2) (backward )?passes",
]


def step(watch):
    return _step(watch, detach=True)


def truth(run):
    assert all(g is None for g in run.after_d.values())
    for n, g in run.stepped.items():
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
