"""A progressive GAN generator fading in its new 8 x 8 block, ``out = (1 - alpha) *
upsample(to_rgb_old(h)) + alpha * to_rgb_new(block(upsample(h)))``, with the fade computed as
``alpha = step // fade_steps``: floor division of two integers gives 0 for every step of the fade
(here step 30 of 100) and jumps to 1 at its end.  During the fade the new block's output is
multiplied by 0: ``new_block`` and ``to_rgb_new`` get exactly-zero gradients and do not learn,
while the old path and the base get finite, nonzero ones.  Nothing raises.

Source: https://www.apxml.com/courses/generative-adversarial-networks-gans/chapter-2-advanced-gan-architectures/progressive-growing-gans
("A sudden introduction of new layers can shock the system and destabilize training. ProGAN
addresses this by smoothly fading in the new layers. When transitioning from resolution R x R to
2R x 2R, the new layers are added, but their influence is gradually increased using a parameter
alpha that ramps up from 0 to 1 over many iterations").  Adapted: a generator from 16 latent
dimensions (``Linear`` to 32 x 4 x 4, a 3 x 3 base convolution, LeakyReLU 0.2, 1 x 1 ``to_rgb``
convolutions, a 3 x 3 new block at 8 x 8), a frozen two-layer critic, the WGAN generator loss on
16 latents, Adam at 1e-3.
"""

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = (
    "https://www.apxml.com/courses/generative-adversarial-networks-gans/"
    "chapter-2-advanced-gan-architectures/progressive-growing-gans"
)
DESCRIPTION = "ProGAN fade alpha = step // fade_steps = 0: new block times 0, zero gradient"
ASK = ["new_block.0.weight"]
MUST = [
    [
        r"alpha",
        r"fade\w*",
        r"//|floor",
        r"integer division",
        r"(multipl\w*|scaled|times) by (zero|0)\b",
        r"(zero|0)\s?\*",
        r"\* ?(zero|0)\b",
    ],
    [r"\bzero\b", r"no gradient"],
]
MUST_NOT = [
    FALSE_OK,
    CLAIMS_NONFINITE,
    r"\bdead\b",
    r"requires_grad\s*(=|is|was)?\s*False",
    r"not in (the |any )?optimi[sz]er",
]
STEP, FADE_STEPS = 30, 100


class Generator(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(16, 32 * 4 * 4)
        self.base = nn.Sequential(nn.Conv2d(32, 32, 3, padding=1), nn.LeakyReLU(0.2))
        self.to_rgb_old = nn.Conv2d(32, 3, 1)
        self.new_block = nn.Sequential(nn.Conv2d(32, 16, 3, padding=1), nn.LeakyReLU(0.2))
        self.to_rgb_new = nn.Conv2d(16, 3, 1)

    def forward(self, z, alpha):
        h = self.base(F.leaky_relu(self.fc(z), 0.2).view(-1, 32, 4, 4))
        old = F.interpolate(self.to_rgb_old(h), scale_factor=2, mode="nearest")
        new = self.to_rgb_new(self.new_block(F.interpolate(h, scale_factor=2, mode="nearest")))
        return (1 - alpha) * old + alpha * new


def critic():
    torch.manual_seed(2)
    c = nn.Sequential(
        nn.Conv2d(3, 8, 3, stride=2, padding=1),
        nn.LeakyReLU(0.2),
        nn.Flatten(),
        nn.Linear(8 * 4 * 4, 1),
    )
    return c.requires_grad_(False)


def step(watch, floor_division=True):
    disc = critic()
    torch.manual_seed(0)
    gen = Generator()
    optimizer = torch.optim.Adam(gen.parameters(), lr=1e-3, betas=(0.0, 0.99))
    z = torch.randn(16, 16, generator=torch.Generator().manual_seed(1))
    alpha = STEP // FADE_STEPS if floor_division else min(1.0, STEP / FADE_STEPS)
    with watch(gen) as w:
        optimizer.zero_grad()
        (-disc(gen(z, alpha)).mean()).backward()
        grads = {n: p.grad.detach().clone() for n, p in gen.named_parameters()}
        optimizer.step()
    return Run(w=w, alpha=alpha, grads=grads)


def truth(run):
    assert run.alpha == 0
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()), n
        if n.startswith(("new_block.", "to_rgb_new.")):
            assert bool((g == 0).all()), n
        else:
            assert bool(g.abs().sum() > 0), n
