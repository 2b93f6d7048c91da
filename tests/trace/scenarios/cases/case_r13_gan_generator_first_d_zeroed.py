"""Control: the same GAN iteration, generator first, with the page's third fix:
``optD.zero_grad()`` right before the discriminator's backward.  The generator's backward still
writes into D's ``.grad``, but that is cleared before D's loss is backpropagated, so
``optD.step()`` applies exactly the gradient of the discriminator's loss.  Both networks move on
their own losses; every gradient is finite and nonzero.

Source: https://tarepan.hatenablog.com/entry/2020/10/22/143519 ("D学習前にNetD.zero_grad()" --
zero the discriminator's gradients before training it; and the DCGAN tutorial's
"netD.zero_grad()" the page quotes).
"""

import torch
from case_r13_gan_generator_first_d_grad_leaks import step as _step
from scenario_kit import CLAIMS_ERROR, CLAIMS_NO_ZERO_GRAD, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = "https://tarepan.hatenablog.com/entry/2020/10/22/143519"
DESCRIPTION = "control: G first, optD.zero_grad() before D's backward: D steps on its own loss"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    CLAIMS_NO_ZERO_GRAD,
    r"accumulat\w*",
    r"leak\w*",
    r"all-zero",
    r"no gradient",
]


def step(watch):
    return _step(watch, zero_d_before_its_backward=True)


def truth(run):
    for got, own in zip(run.d_grads, run.own, strict=True):
        assert torch.allclose(got, own, rtol=1e-4, atol=1e-7)
    assert all(h is None or bool((h == 0).all()) for h in run.leaked)  # cleared before D's loss
    for gr in run.d_grads + run.g_grads:
        assert bool(torch.isfinite(gr).all()) and bool(gr.abs().sum() > 0)
