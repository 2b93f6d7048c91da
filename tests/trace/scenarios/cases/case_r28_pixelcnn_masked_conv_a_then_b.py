"""A healthy PixelCNN step that looks partly dead: masked convolutions with the mask applied in the
forward, ``F.conv2d(x, weight * mask)``, mask A in the first layer (the centre pixel and everything
after it in raster order hidden) and mask B in the next (the centre allowed: it holds features of
earlier pixels only).  The masked entries of each kernel, about half of them, get exactly zero
gradient at every step, by design; every parameter tensor gets a finite, nonzero gradient, and the
prediction for a pixel does not depend on that pixel or on any later one.  Two Adam steps are
watched.

Source: https://riksi.github.io/annotaited/generative-models/2023/01/27/pixel-cnn.html ("We
observe that Convolutional Neural Networks (CNN) can also be used as sequence model with a fixed
dependency range, by using Masked convolutions"; "The PixelCNN architecture is a fully convolutional
network of fifteen layers that preserves the spatial resolution of its input throughout the layers
and outputs a conditional distribution at each location").  Adapted: two masked layers (``5 x 5``
mask A, ``3 x 3`` mask B, 16 channels, ``Tanh``) and a ``1 x 1`` output convolution, 64 binary 8 x 8
images of smoothed noise, a Bernoulli likelihood per pixel, Adam at 1e-3.
"""

import torch
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://riksi.github.io/annotaited/generative-models/2023/01/27/pixel-cnn.html"
DESCRIPTION = "healthy: PixelCNN masks A then B applied in forward: masked entries get 0 grad"
ASK = []
MUST = [[HEALTHY_OK, r"mask\w*"]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    r"all[- ]zero",
    r"\bdead\b",
    r"not in (the |any )?optimi[sz]er",
    r"requires_grad\s*(=|is|was)?\s*False",
]
PIXEL = (4, 4)


class MaskedConv2d(nn.Conv2d):
    def __init__(self, c_in, c_out, size, mask_type, apply="forward"):
        super().__init__(c_in, c_out, size, padding=size // 2)
        mask = torch.ones(size, size)
        c = size // 2
        mask[c, c + (mask_type == "B") :] = 0
        mask[c + 1 :, :] = 0
        self.register_buffer("mask", mask.expand_as(self.weight).clone())
        self.apply_mask = apply
        if apply == "init":  # masked once: the weight entries set to 0 at construction
            with torch.no_grad():
                self.weight.mul_(self.mask)

    def forward(self, x):
        weight = self.weight * self.mask if self.apply_mask == "forward" else self.weight
        return F.conv2d(x, weight, self.bias, padding=self.padding)


class PixelCNN(nn.Module):
    def __init__(self, first="A", apply="forward"):
        super().__init__()
        self.conv1 = MaskedConv2d(1, 16, 5, first, apply)
        self.conv2 = MaskedConv2d(16, 16, 3, "B", apply)
        self.out = nn.Conv2d(16, 1, 1)

    def forward(self, x):
        return self.out(torch.tanh(self.conv2(torch.tanh(self.conv1(x)))))


def images():
    g = torch.Generator().manual_seed(1)
    noise = torch.randn(64, 1, 8, 8, generator=g)
    return (F.avg_pool2d(noise, 3, stride=1, padding=1) > 0).float()


def dependence(model, x):
    """|d logit(PIXEL) / d x| summed over the batch, per input pixel (8, 8)."""
    x = x.clone().requires_grad_(True)
    model(x)[:, 0, PIXEL[0], PIXEL[1]].sum().backward()
    return x.grad.abs().sum((0, 1))


def step(watch, first="A", apply="forward"):
    torch.manual_seed(0)
    model = PixelCNN(first, apply)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    x = images()
    initial = {n: p.detach().clone() for n, p in model.named_parameters()}
    grads = []
    with watch(model) as w:
        for _ in range(2):
            optimizer.zero_grad()
            F.binary_cross_entropy_with_logits(model(x), x).backward()
            grads.append({n: p.grad.detach().clone() for n, p in model.named_parameters()})
            optimizer.step()
    masks = {"conv1.weight": model.conv1.mask, "conv2.weight": model.conv2.mask}
    return Run(
        w=w,
        model=model,
        initial=initial,
        grads=grads,
        masks=masks,
        dependence=dependence(model, x),
    )


def raster_after(pixel):
    """True at the pixel and every later one in raster order."""
    order = torch.arange(64).view(8, 8)
    return order >= order[pixel]


def truth(run):
    for grads in run.grads:
        for n, g in grads.items():
            assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
        for n, mask in run.masks.items():
            assert bool((grads[n][mask == 0] == 0).all()), n
    assert float(run.dependence[raster_after(PIXEL)].abs().max()) == 0.0
    assert float(run.dependence[~raster_after(PIXEL)].sum()) > 0
