"""A pix2pix generator step whose adversarial term gives the PatchGAN discriminator's output a
target of one label per image, ``torch.ones(N, 1)``.  A PatchGAN does not output one score per
image but a map of patch scores, here ``(N, 1, 4, 4)``; ``nn.BCEWithLogitsLoss`` does not
broadcast its target and raises ``ValueError: Target size (torch.Size([8, 1])) must be the same
as input size (torch.Size([8, 1, 4, 4]))`` before any backward: every generator ``.grad`` stays
``None`` and nothing moves.

Source: https://github.xiaohuzi123231346.workers.dev/Tasfia266/Night-to-Day-image-translation-using-pix-2-pix-gan
(a copy of the repository's README: "For the discriminator, a PatchGAN model is used which is a
deep convolutional neural network that gives prediction on the patches of an image as real or
fake. The discriminator is run convolutionally across the image and then all the responses are
averaged to a single score"; "an adversarial loss which is binary-crossentropy and L1 loss ... are
combined to form a composite loss for training the generator").  Adapted: a two-convolution
generator (``Conv2d(3, 16, 3)``, ``LeakyReLU(0.2)``, ``Conv2d(16, 3, 3)``, ``Tanh``), a conditional
two-convolution PatchGAN on the concatenated input and output (frozen during the generator step),
8 pairs of 16 x 16 images, lambda 100 on the L1 term, Adam at 2e-4.
"""

import torch
from scenario_kit import FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = (
    "https://github.xiaohuzi123231346.workers.dev/Tasfia266/"
    "Night-to-Day-image-translation-using-pix-2-pix-gan"
)
DESCRIPTION = "pix2pix: BCE target ones(N, 1) for a (N, 1, 4, 4) PatchGAN map: size error (raises)"
ASK = []
MUST = [
    [r"\braised\b", r"ValueError", r"exception", r"\berror\b"],
    [
        r"target size",
        r"(size|shape)s?[^\n]{0,60}(mismatch|must be the same|differ|match)",
        r"mismatch\w*[^\n]{0,40}(size|shape)",
        r"\(8, 1, 4, 4\)|8, 1, 4, 4",
        r"patch\w*",
        r"ones_like",
    ],
]
MUST_NOT = [FALSE_OK]
LAMBDA = 100.0


def generator():
    return nn.Sequential(
        nn.Conv2d(3, 16, 3, padding=1), nn.LeakyReLU(0.2), nn.Conv2d(16, 3, 3, padding=1), nn.Tanh()
    )


def patch_discriminator():
    return nn.Sequential(
        nn.Conv2d(6, 16, 4, stride=2, padding=1), nn.LeakyReLU(0.2), nn.Conv2d(16, 1, 4, 2, 1)
    )


def data():
    g = torch.Generator().manual_seed(1)
    x = torch.rand(8, 3, 16, 16, generator=g) * 2 - 1
    y = torch.flip(x, dims=[1]) * 0.8  # the "day" image: channels swapped and dimmed
    return x, y


def step(watch, per_patch=False):
    torch.manual_seed(0)
    gen, disc = generator(), patch_discriminator()
    disc.requires_grad_(False)  # the generator step
    optimizer = torch.optim.Adam(gen.parameters(), lr=2e-4, betas=(0.5, 0.999))
    criterion = nn.BCEWithLogitsLoss()
    x, y = data()
    before = {n: p.detach().clone() for n, p in gen.named_parameters()}
    error, grads, shape = None, None, None
    try:
        with watch(gen) as w:
            optimizer.zero_grad()
            fake = gen(x)
            pred = disc(torch.cat([x, fake], 1))
            shape = tuple(pred.shape)
            real = torch.ones_like(pred) if per_patch else torch.ones(x.size(0), 1)
            loss = criterion(pred, real) + LAMBDA * F.l1_loss(fake, y)
            loss.backward()
            grads = {n: p.grad.detach().clone() for n, p in gen.named_parameters()}
            optimizer.step()
    except ValueError as e:
        error = e
    return Run(w=w, gen=gen, before=before, error=error, grads=grads, shape=shape)


def truth(run):
    assert run.shape == (8, 1, 4, 4)
    assert run.error is not None and "must be the same as input size" in str(run.error)
    for n, p in run.gen.named_parameters():
        assert p.grad is None and torch.equal(p.detach(), run.before[n]), n
