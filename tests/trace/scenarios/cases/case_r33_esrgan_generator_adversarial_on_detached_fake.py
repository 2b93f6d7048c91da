"""An ESRGAN-style super-resolution step with the relativistic average discriminator: the
generator's loss is ``eta * L1(fake, hr) + lambda * L_G^Ra`` with ``L_G^Ra = BCE(C(hr) - mean
C(fake), 0) + BCE(C(fake) - mean C(hr), 1)``.  The generator step's discriminator calls were copied
from the discriminator step, ``pred_fake = netD(fake.detach())``: the adversarial term is computed
on a tensor cut from the generator, so it gives the generator nothing, and the generator trains on
the L1 term alone (its gradient equals the L1 term's exactly), while the relativistic term's own
gradient for the generator is 0.4 times the L1 one's.  The discriminator, still requiring grad,
gets a ``.grad`` from the generator's loss, which its own step's ``zero_grad`` clears.  Nothing
raises; every gradient is finite, and nonzero but for the discriminator's last bias (a relativistic
loss only sees differences of its logits, so that bias gets exactly zero, in both steps).

Source: https://study.space/p/The_relativistic_discriminator%3A_a_key_element_missing_from_standard_GAN
("This adjustment is achieved through a relativistic discriminator, which estimates the probability
that real data is more realistic than randomly sampled fake data. Two variants of this approach are
presented: Relativistic GANs (RGANs) and Relativistic average GANs (RaGANs)").  Adapted: a generator
``Conv2d(3, 16, 3), LeakyReLU, Upsample(2), Conv2d(16, 3, 3)`` from 8 x 8 to 16 x 16, a
discriminator of two strided convolutions and a linear layer, eta 1e-2 as in ESRGAN and lambda
5e-2 (ESRGAN's 5e-3 sits beside a perceptual term left out here), the generator step first and then the discriminator's, Adam at 1e-4 for both.
"""

import copy
import math

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://study.space/p/The_relativistic_discriminator%3A_a_key_element_missing_from_standard_GAN"
DESCRIPTION = "ESRGAN G step scores netD(fake.detach()): the relativistic term gives G nothing"
ASK = []
MUST = [
    [r"detach\w*", r"cut|severed|disconnected|no gradient (reaches|flows|to)"],
    [
        r"adversarial",
        r"relativistic",
        r"\bRaGAN\b|\bL_?G\b",
        r"generator",
        r"only (from |the )?(the )?(l1|pixel)",
    ],
]
MUST_NOT = [FALSE_OK, CLAIMS_NONFINITE, r"\bdead\b"]
ETA, LAMBDA = 1e-2, 5e-2


class ESRGAN(nn.Module):
    def __init__(self):
        super().__init__()
        self.g = nn.Sequential(
            nn.Conv2d(3, 16, 3, padding=1), nn.LeakyReLU(0.2), nn.Upsample(scale_factor=2),
            nn.Conv2d(16, 3, 3, padding=1),
        )  # fmt: skip
        self.d = nn.Sequential(
            nn.Conv2d(3, 16, 3, 2, 1), nn.LeakyReLU(0.2), nn.Conv2d(16, 32, 3, 2, 1),
            nn.LeakyReLU(0.2), nn.Flatten(), nn.Linear(32 * 4 * 4, 1),
        )  # fmt: skip


def relativistic(pred_a, pred_b, target_a, target_b):
    bce = F.binary_cross_entropy_with_logits
    return (
        bce(pred_a - pred_b.mean(), torch.full_like(pred_a, target_a))
        + bce(pred_b - pred_a.mean(), torch.full_like(pred_b, target_b))
    ) / 2


def generator_loss(model, lr, hr, detach_fake):
    fake = model.g(lr)
    pred_real = model.d(hr).detach()
    pred_fake = model.d(fake.detach() if detach_fake else fake)
    pixel = F.l1_loss(fake, hr)
    adversarial = relativistic(pred_real, pred_fake, 0.0, 1.0)
    return ETA * pixel + LAMBDA * adversarial, pixel, adversarial, fake


def step(watch, detach_fake=True):
    torch.manual_seed(0)
    model = ESRGAN()
    opt_g = torch.optim.Adam(model.g.parameters(), lr=1e-4)
    opt_d = torch.optim.Adam(model.d.parameters(), lr=1e-4)
    g = torch.Generator().manual_seed(8)
    hr = torch.rand(8, 3, 16, 16, generator=g)
    lr = F.avg_pool2d(hr, 2)
    twin = copy.deepcopy(model)  # each term's gradient for the generator, with torch alone
    _, pixel, adversarial, _ = generator_loss(twin, lr, hr, detach_fake=False)
    g_params = list(twin.g.parameters())
    pixel_grad = torch.autograd.grad(ETA * pixel, g_params, retain_graph=True)
    adv_grad = torch.autograd.grad(LAMBDA * adversarial, g_params)
    with watch(model) as w:
        opt_g.zero_grad()
        loss_g, _, _, fake = generator_loss(model, lr, hr, detach_fake)
        loss_g.backward()
        g_grads = [p.grad.detach().clone() for p in model.g.parameters()]
        d_grads_after_g = [p.grad is not None for p in model.d.parameters()]
        opt_g.step()
        opt_d.zero_grad()
        pred_real, pred_fake = model.d(hr), model.d(fake.detach())
        loss_d = relativistic(pred_real, pred_fake, 1.0, 0.0)
        loss_d.backward()
        d_grads = [p.grad.detach().clone() for p in model.d.parameters()]
        opt_d.step()
    return Run(
        w=w, g_grads=g_grads, d_grads=d_grads, d_grads_after_g=d_grads_after_g,
        pixel_grad=pixel_grad, adv_grad=adv_grad,
        losses=[float(loss_g.detach()), float(loss_d.detach())],
    )  # fmt: skip


def _norm(ts):
    return float(torch.cat([t.flatten() for t in ts]).norm())


def truth(run):
    assert all(math.isfinite(v) for v in run.losses)
    assert all(run.d_grads_after_g)
    for g in run.g_grads + run.d_grads[:-1]:
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0)
    assert bool(run.d_grads[-1].abs().sum() == 0)  # shift-invariant: the last bias gets 0
    assert _norm(run.adv_grad) > 0.3 * _norm(run.pixel_grad)  # the term matters
    for g, p in zip(run.g_grads, run.pixel_grad, strict=True):
        assert torch.allclose(g, p, rtol=1e-5, atol=1e-9)  # G trains on L1 alone
