"""An unsupervised optical-flow step that warps the second frame with ``grid_sample`` and compares
it with the first (a photometric L1 loss), with the sampling grid built as in the blog's ``flow_warp``:
the base grid holds pixel coordinates ``0 .. W-1`` and only the flow is divided by ``(W - 1) / 2``.
``grid_sample`` reads its grid in normalised coordinates, ``[-1, 1]`` across the image: every
pixel whose column or row index is 2 or more samples far outside the image, gets the zero
padding, and passes back no gradient (its four bilinear neighbours are all out of bounds).  Over
96% of the warped image is exactly zero, the flow network's output gets a zero gradient at the same
positions, and the loss cannot be reduced by any flow.  Every gradient is finite and no parameter's
gradient is all zero (a few corner pixels per image still sample inside); nothing raises.

Source: https://www.codegenes.net/blog/pytorch-differential-flow-warp (``grid = torch.stack((grid_x,
grid_y), dim=0).float()``; ``flow_norm[:, 0, :, :] = flow[:, 0, :, :] / ((W - 1.0) / 2.0)``;
``grid = grid + flow_norm``; ``warped_image = F.grid_sample(image, grid, mode='bilinear',
padding_mode='zeros')``).  Adapted: ``indexing="ij"`` and ``align_corners=False`` written out (the
defaults, without the warnings), a ``Conv2d(2, 8, 3)``, ``Tanh``, ``Conv2d(8, 2, 3)`` flow network
on the two stacked frames, 8 pairs of smooth 16 x 16 frames whose second frame is the first shifted
one pixel right, Adam at 1e-3.
"""

import copy

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://www.codegenes.net/blog/pytorch-differential-flow-warp"
DESCRIPTION = "flow warp grid in pixel units passed to grid_sample: almost every sample is padding"
ASK = []
MUST = [
    [
        r"grid_sample",
        r"\bgrid\b",
        r"normali[sz]\w*",
        r"\[-1, ?1\]",
        r"out of (range|bounds)",
        r"outside",
        r"padding",
    ],
    [r"\bzero\b", r"no gradient"],
]
MUST_NOT = [FALSE_OK, CLAIMS_NONFINITE, r"\bdead\b", r"requires_grad\s*(=|is|was)?\s*False"]


def flow_warp_pixel_grid(image, flow):
    n, _, h, w = image.size()
    grid_y, grid_x = torch.meshgrid(torch.arange(0, h), torch.arange(0, w), indexing="ij")
    grid = torch.stack((grid_x, grid_y), dim=0).float()
    grid = grid.unsqueeze(0).repeat(n, 1, 1, 1)
    flow_norm = torch.zeros_like(flow)
    flow_norm[:, 0, :, :] = flow[:, 0, :, :] / ((w - 1.0) / 2.0)
    flow_norm[:, 1, :, :] = flow[:, 1, :, :] / ((h - 1.0) / 2.0)
    grid = (grid + flow_norm).permute(0, 2, 3, 1)
    return F.grid_sample(image, grid, mode="bilinear", padding_mode="zeros", align_corners=False)


def flow_warp_normalized(image, flow):
    n, _, h, w = image.size()
    grid_y, grid_x = torch.meshgrid(torch.arange(h), torch.arange(w), indexing="ij")
    grid = torch.stack((grid_x, grid_y), dim=0).float().unsqueeze(0).repeat(n, 1, 1, 1)
    sampling = grid + flow
    x = 2.0 * sampling[:, 0] / (w - 1) - 1.0
    y = 2.0 * sampling[:, 1] / (h - 1) - 1.0
    grid = torch.stack((x, y), dim=-1)
    return F.grid_sample(image, grid, mode="bilinear", padding_mode="zeros", align_corners=True)


def data():
    g = torch.Generator().manual_seed(1)
    first = F.interpolate(torch.rand(8, 1, 4, 4, generator=g), size=16, mode="bilinear")
    return first, torch.roll(first, shifts=1, dims=3)


def step(watch, warp=flow_warp_pixel_grid):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(2, 8, 3, padding=1), nn.Tanh(), nn.Conv2d(8, 2, 3, padding=1))
    start = copy.deepcopy(model)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    first, second = data()
    pair = torch.cat([first, second], 1)
    with watch(model) as w:
        optimizer.zero_grad()
        warped = warp(second, model(pair))
        loss = F.l1_loss(warped, first)
        loss.backward()
        grads = {n: p.grad.detach().clone() for n, p in model.named_parameters()}
        optimizer.step()
    flow = start(pair)
    flow_grad = torch.autograd.grad(F.l1_loss(warp(second, flow), first), flow)[0]
    return Run(w=w, model=model, grads=grads, warped=warped.detach(), flow_grad=flow_grad)


def truth(run):
    assert float((run.warped == 0).float().mean()) > 0.9  # sampled from the zero padding
    assert float((run.flow_grad.abs().sum(1) == 0).float().mean()) > 0.9
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
