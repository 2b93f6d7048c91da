"""A HiFi-GAN-style vocoder step with both optimizers zeroed once at the top of the iteration and
the discriminator's loss taken on the generated audio without ``detach()``, its ``backward`` given
``retain_graph=True`` (which silences the error the generator's backward through ``y_g_hat`` would
otherwise raise).  The discriminator's ``backward()`` then also writes the gradient of the
discriminator's loss into the generator's ``.grad``; the generator's own backward (adversarial,
feature matching and mel-style L1 terms) adds to it, and the generator's step reads the sum: its
update includes the gradient that makes the discriminator's job easier.  The generator's ``.grad``
sums two backward passes of two different losses.  Every gradient is finite and nonzero and nothing
raises.

Source: https://deepwiki.com/jik876/hifi-gan/2.3-loss-functions ("The discriminator loss trains both
the Multi-Period Discriminator (MPD) and Multi-Scale Discriminator (MSD) to differentiate between
real and generated audio samples"; "loss_mel = F.l1_loss(y_mel, y_g_hat_mel) * 45"; "The feature
matching loss computes the L1 distance between the feature maps extracted by the discriminators when
processing real and generated audio"; "loss_fm_f = feature_loss(fmap_f_r, fmap_f_g)").  Adapted: no
``detach()`` in the discriminator's loss, ``retain_graph=True`` and one ``zero_grad`` per optimizer
before both passes (the page gives the losses, not the order); a generator ``Conv1d(8, 32, 3),
LeakyReLU(0.1), ConvTranspose1d(32, 16, 4, stride=4), LeakyReLU(0.1), Conv1d(16, 1, 7), Tanh`` from
8-channel frames of 16 steps to 64 samples, one discriminator of three ``Conv1d`` layers with
``LeakyReLU(0.1)`` returning its feature maps, the least-squares GAN losses, the feature-matching
loss times 2, an L1 on a fixed magnitude filter bank times 45 standing in for the mel loss, AdamW
(betas 0.8, 0.99) at 2e-4 for each network, 16 clips.
"""

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://deepwiki.com/jik876/hifi-gan/2.3-loss-functions"
DESCRIPTION = "HiFi-GAN, D loss on y_g_hat not detached, retain_graph: G steps on D's grad too"
ASK = []
MUST = [
    [r"generator|\bgen\.|\bG\b"],
    [
        r"detach\w*",
        r"(discriminator|\bD\b)('s)? (loss|backward)[^\n]{0,80}(generator|\bG\b)",
        r"(two|2|both) (backward )?passes|accumulat\w*|sums? (of )?(two|2|both)",
        r"zero_grad",
        r"retain_graph",
    ],
]
MUST_NOT = [FALSE_OK, CLAIMS_NONFINITE, r"\bdead\b", r"requires_grad\s*(=|is|was)?\s*False"]


class Generator(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(
            nn.Conv1d(8, 32, 3, padding=1),
            nn.LeakyReLU(0.1),
            nn.ConvTranspose1d(32, 16, 4, stride=4),
            nn.LeakyReLU(0.1),
            nn.Conv1d(16, 1, 7, padding=3),
            nn.Tanh(),
        )

    def forward(self, frames):
        return self.net(frames)


class Discriminator(nn.Module):
    def __init__(self):
        super().__init__()
        self.convs = nn.ModuleList(
            [nn.Conv1d(1, 16, 5, stride=2, padding=2), nn.Conv1d(16, 32, 5, stride=2, padding=2)]
        )
        self.post = nn.Conv1d(32, 1, 3, padding=1)

    def forward(self, audio):
        fmap = []
        for conv in self.convs:
            audio = F.leaky_relu(conv(audio), 0.1)
            fmap.append(audio)
        out = self.post(audio)
        fmap.append(out)
        return out.flatten(1), fmap


class Vocoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.generator, self.disc = Generator(), Discriminator()


def feature_loss(fmap_r, fmap_g):
    return 2 * sum(torch.mean(torch.abs(r - g)) for r, g in zip(fmap_r, fmap_g, strict=True))


def spectral(audio, bank):
    return F.conv1d(audio, bank, stride=4).abs()


def data():
    g = torch.Generator().manual_seed(1)
    audio = torch.tanh(torch.randn(16, 1, 64, generator=g).cumsum(-1) / 4)
    frames = F.avg_pool1d(audio.repeat(1, 8, 1) * torch.linspace(0.5, 1.5, 8)[:, None], 4)
    bank = torch.randn(8, 1, 8, generator=g)
    return frames, audio, bank


def step(watch, detach=False):
    torch.manual_seed(0)
    model = Vocoder()
    optim_g = torch.optim.AdamW(model.generator.parameters(), 2e-4, betas=(0.8, 0.99))
    optim_d = torch.optim.AdamW(model.disc.parameters(), 2e-4, betas=(0.8, 0.99))
    frames, y, bank = data()
    with watch(model) as w:
        if not detach:
            optim_g.zero_grad()
            optim_d.zero_grad()
        y_g_hat = model.generator(frames)
        # discriminator
        if detach:
            optim_d.zero_grad()
        y_d_r, _ = model.disc(y)
        y_d_g, _ = model.disc(y_g_hat.detach() if detach else y_g_hat)
        loss_disc = torch.mean((1 - y_d_r) ** 2) + torch.mean(y_d_g**2)
        loss_disc.backward(retain_graph=not detach)
        after_d = {
            n: None if p.grad is None else p.grad.detach().clone()
            for n, p in model.generator.named_parameters()
        }
        optim_d.step()
        # generator
        if detach:
            optim_g.zero_grad()
        loss_mel = F.l1_loss(spectral(y, bank), spectral(y_g_hat, bank)) * 45
        y_d_r, fmap_r = model.disc(y)
        y_d_g, fmap_g = model.disc(y_g_hat)
        loss_gen = torch.mean((1 - y_d_g) ** 2) + feature_loss(fmap_r, fmap_g) + loss_mel
        loss_gen.backward()
        stepped = {n: p.grad.detach().clone() for n, p in model.generator.named_parameters()}
        optim_g.step()
    return Run(w=w, model=model, after_d=after_d, stepped=stepped)


def truth(run):
    for n, g in run.after_d.items():
        assert g is not None and bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
    for n, g in run.stepped.items():
        assert bool(torch.isfinite(g).all()) and not torch.equal(g, run.after_d[n]), n
