"""The control of ``esrgan_generator_adversarial_on_detached_fake``: the same ESRGAN-style step with
the generator's relativistic term computed on ``netD(fake)``, the real predictions detached (as in
ESRGAN's code).  The generator's gradient is the L1 term's plus the relativistic term's.  The
discriminator keeps ``requires_grad`` during the generator step, so it gets a ``.grad`` from the
generator's loss that its own step's ``zero_grad`` clears before its backward: harmless, by design
here.  Every gradient is finite and nonzero but the discriminator's last bias, which gets exactly
zero: the relativistic loss sees only differences of logits, so a shared bias cancels.

Source: https://tomesphere.com/paper/1807.00734 ("This paper introduces relativistic discriminators
in GANs, which compare real and fake data directly, leading to more stable training and higher
quality image generation, especially at high resolutions"; "RaGANs outperform WGAN-GP in image
quality with fewer updates").  Adapted: the bug's networks, data and optimizers with the fake not
detached in the generator step.
"""

import torch
from case_r33_esrgan_generator_adversarial_on_detached_fake import step as _step
from scenario_kit import CLAIMS_ERROR, CLAIMS_NO_ZERO_GRAD, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = "https://tomesphere.com/paper/1807.00734"
DESCRIPTION = "control: ESRGAN G step scores netD(fake): L1 plus the relativistic term"
ASK = []
MUST = [[HEALTHY_OK, r"(bias|shift)[^\n]{0,80}(cancel\w*|invarian\w*|relativistic)"]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    CLAIMS_NO_ZERO_GRAD,
    r"\bdead\b",
    r"fake\.detach|detached fake",
]


def step(watch):
    return _step(watch, detach_fake=False)


def truth(run):
    assert all(run.d_grads_after_g)
    for g, p, a in zip(run.g_grads, run.pixel_grad, run.adv_grad, strict=True):
        assert bool(torch.isfinite(g).all())
        assert torch.allclose(g, p + a, rtol=1e-4, atol=1e-9)
    assert not all(
        torch.allclose(g, p, rtol=1e-5, atol=1e-9)
        for g, p in zip(run.g_grads, run.pixel_grad, strict=True)
    )
    for g in run.d_grads[:-1]:
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0)
    assert bool(run.d_grads[-1].abs().sum() == 0)  # the logits' shared bias cancels
