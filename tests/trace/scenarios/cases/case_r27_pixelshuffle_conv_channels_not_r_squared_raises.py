"""A sub-pixel (ESPCN-style) super-resolution network whose last convolution outputs ``C * r``
channels instead of ``C * r**2`` before ``nn.PixelShuffle(r)``: for a grey image (``C = 1``) and
``r = 3`` it outputs 3 channels, and ``pixel_shuffle`` needs the channel count to be divisible by
``r**2 = 9``.  The forward raises ``RuntimeError: pixel_shuffle expects its input's 'channel'
dimension to be divisible by the square of upscale_factor``, so no backward runs: every ``.grad``
stays ``None`` and nothing moves.

Source: https://mseyfi.github.io/posts/SubPixelConv ("Given a low-resolution feature map with
shape: (B, C x r^2, H, W) It rearranges it to shape: (B, C, H x r, W x r)"; "Use a convolution layer
that outputs C x r^2 channels").  Adapted: ``Conv2d(1, 16, 3, padding=1)``, ``Tanh``, ``Conv2d(16,
C * r, 3, padding=1)``, ``PixelShuffle(3)`` on 8 x 8 low-resolution crops (3 x 3 average pools of
24 x 24 smooth random images), MSE against the 24 x 24 images, Adam at 1e-3.
"""

import torch
from scenario_kit import FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://mseyfi.github.io/posts/SubPixelConv"
DESCRIPTION = "conv before PixelShuffle(3) outputs C*r = 3 channels, not C*r^2 = 9: raises"
ASK = []
MUST = [
    [r"\braised\b", r"RuntimeError", r"exception", r"\berror\b"],
    [
        r"pixel[_ ]?shuffle",
        r"divisible",
        r"upscale",
        r"square",
        r"r\s?\*\*\s?2|r\^2|r²",
        r"\b9\b[^\n]{0,60}channel",
        r"channel[^\n]{0,80}\b(3|9)\b",
    ],
]
MUST_NOT = [FALSE_OK]
R = 3


def data():
    g = torch.Generator().manual_seed(1)
    hr = F.avg_pool2d(torch.randn(16, 1, 30, 30, generator=g), 7, stride=1)  # smooth, 24 x 24
    lr = F.avg_pool2d(hr, R)
    return lr, hr


class SubPixelNet(nn.Module):
    def __init__(self, last_channels):
        super().__init__()
        self.body = nn.Sequential(nn.Conv2d(1, 16, 3, padding=1), nn.Tanh())
        self.last = nn.Conv2d(16, last_channels, 3, padding=1)
        self.shuffle = nn.PixelShuffle(R)

    def forward(self, x):
        return self.shuffle(self.last(self.body(x)))


def step(watch):
    torch.manual_seed(0)
    model = SubPixelNet(1 * R)  # C * r, should be C * r ** 2
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    lr, hr = data()
    before = {n: p.detach().clone() for n, p in model.named_parameters()}
    error = None
    try:
        with watch(model) as w:
            optimizer.zero_grad()
            F.mse_loss(model(lr), hr).backward()
            optimizer.step()
    except RuntimeError as e:
        error = e
    return Run(w=w, model=model, before=before, error=error)


def truth(run):
    assert run.model.last.out_channels == R
    assert run.error is not None and "divisible by the square of upscale_factor" in str(run.error)
    for n, p in run.model.named_parameters():
        assert p.grad is None and torch.equal(p.detach(), run.before[n]), n
