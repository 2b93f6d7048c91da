"""An AdaIN style-transfer decoder step whose AdaIN layer normalises the content features by their
per-channel standard deviation without an epsilon, ``(x - mean) / x.std(dim=(2, 3))``, on a batch
holding one blank (all-black) content image.  The frozen encoder turns a constant image into
constant feature maps: every channel of that image has standard deviation 0, and dividing by it
gives NaN (``0 / 0``) or, where the mean's rounding leaves a tiny difference, +-inf: no target
feature ``t = AdaIN(f(c), f(s))`` of that image is finite.  The content loss
``mse(f(g(t)), t)`` is NaN and every decoder gradient has NaN entries; Adam writes them into the
weights.  Nothing raises.

Source: https://sh-tsang.medium.com/brief-review-adain-arbitrary-style-transfer-in-real-time-with-adaptive-instance-normalization-70d30cf95ef7
("AdaIN receives a content input x and a style input y, and simply aligns the channel-wise mean
and variance of x to match those of y"; "A randomly initialized decoder g is trained to map t back
to the image space").  Adapted: a frozen encoder ``Conv2d(3, 8, 3)`` (no padding) with LeakyReLU
0.2 in place of VGG-19, a decoder ``Conv2d(8, 16, 3, padding=1), LeakyReLU(0.2),
ConvTranspose2d(16, 3, 3)``, 4 content images of 16 x 16 (the last one blank) and 4 random style
textures, the content loss plus the style loss on per-channel means and standard deviations
(weight 10, with an epsilon), Adam at 1e-4.
"""

import math

import torch
from scenario_kit import FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = (
    "https://sh-tsang.medium.com/brief-review-adain-arbitrary-style-transfer-in-real-time-with-"
    "adaptive-instance-normalization-70d30cf95ef7"
)
DESCRIPTION = "AdaIN std without eps on a blank content image: x / 0 target, NaN loss and grads"
ASK = []
MUST = [
    [r"\bnan\b", r"non-?finite"],
    [
        r"\beps(ilon)?\b",
        r"\bstd\b",
        r"standard deviation",
        r"(zero|0) (variance|std)",
        r"varian\w*[^\n]{0,40}(zero|\b0\b)",
        r"divi\w*[^\n]{0,40}(zero|\b0\b)",
        r"0 ?/ ?0",
        r"blank|constant|black",
        r"adain",
    ],
]
MUST_NOT = [
    FALSE_OK,
    r"\bdead\b",
    r"requires_grad\s*(=|is|was)?\s*False",
    r"not in (the |any )?optimi[sz]er",
]
STYLE_WEIGHT = 10.0


def stats(x, eps):
    mean = x.mean(dim=(2, 3), keepdim=True)
    if eps is None:
        return mean, x.std(dim=(2, 3), keepdim=True)
    return mean, (x.var(dim=(2, 3), keepdim=True, unbiased=False) + eps).sqrt()


def adain(content, style, eps):
    c_mean, c_std = stats(content, eps)
    s_mean, s_std = stats(style, 1e-5)
    return (content - c_mean) / c_std * s_std + s_mean


def networks():
    torch.manual_seed(2)
    encoder = nn.Sequential(nn.Conv2d(3, 8, 3), nn.LeakyReLU(0.2)).requires_grad_(False)
    torch.manual_seed(0)
    decoder = nn.Sequential(
        nn.Conv2d(8, 16, 3, padding=1), nn.LeakyReLU(0.2), nn.ConvTranspose2d(16, 3, 3)
    )
    return encoder, decoder


def images():
    g = torch.Generator().manual_seed(1)
    content = torch.rand(4, 3, 16, 16, generator=g)
    content[3] = 0.0  # a blank frame
    style = torch.rand(4, 3, 16, 16, generator=g) ** 2
    return content, style


def step(watch, eps=None):
    encoder, decoder = networks()
    optimizer = torch.optim.Adam(decoder.parameters(), lr=1e-4)
    content, style = images()
    with watch(decoder) as w:
        optimizer.zero_grad()
        f_s = encoder(style)
        t = adain(encoder(content), f_s, eps)
        f_out = encoder(decoder(t))
        out_mean, out_std = stats(f_out, 1e-5)
        s_mean, s_std = stats(f_s, 1e-5)
        loss = F.mse_loss(f_out, t) + STYLE_WEIGHT * (
            F.mse_loss(out_mean, s_mean) + F.mse_loss(out_std, s_std)
        )
        loss.backward()
        grads = {n: p.grad.detach().clone() for n, p in decoder.named_parameters()}
        optimizer.step()
    return Run(w=w, t=t.detach(), loss=loss.item(), grads=grads)


def truth(run):
    assert not bool(torch.isfinite(run.t[3]).any()) and bool(torch.isnan(run.t[3]).any())
    assert bool(torch.isfinite(run.t[:3]).all())
    assert math.isnan(run.loss)
    for n, g in run.grads.items():
        assert bool(torch.isnan(g).any()), n
