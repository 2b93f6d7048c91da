"""Class: ``grid_sample`` whose grid sends most sample points outside its input (a grid in
pixel units where normalised coordinates are expected, a zoom far out) reads the padding there:
with ``padding_mode`` ``'zeros'`` or ``'border'`` those points give no gradient to the grid, so
a flow or transform that makes the grid learns from the few points left.  The watch names it;
a grid inside ``[-1, 1]`` or ``padding_mode='reflection'`` is not named.

The truth comes from torch alone: ``torch.autograd.grad`` of the loss with respect to the
grid, and the share of sample points whose gradient is exactly zero in every coordinate, or of
coordinates whose gradient is zero for ``'border'`` (half or more: the case).  Generated: the grid's units or zoom, the padding mode, align_corners, the
seed.
"""

from __future__ import annotations

import re

import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn
from torch.nn import functional as F

import gradarg

SIZE = 12


def _grid(flow, units, align):
    ys, xs = torch.meshgrid(torch.arange(SIZE.__float__()), torch.arange(SIZE.__float__()),
                            indexing="ij")
    base = torch.stack([xs, ys], dim=-1)  # pixels
    grid = base + flow.permute(0, 2, 3, 1)
    if units == "pixels":
        return grid
    norm = 2 * grid / (SIZE - 1) - 1 if align else (2 * grid + 1) / SIZE - 1
    if units == "shifted":  # x moved right by 1.2: most points beyond in x only
        return norm + torch.tensor([1.2, 0.0])
    return norm * {"normalised": 1.0, "zoom 1.2": 1.2, "zoom 3": 3.0}[units]


@settings(max_examples=40, deadline=None)
@given(units=st.sampled_from(["pixels", "normalised", "zoom 1.2", "zoom 3", "shifted"]),
       padding=st.sampled_from(["zeros", "border", "reflection"]), align=st.booleans(),
       seed=st.integers(0, 2**16))
def test_a_grid_sample_reading_its_padding_is_named(units, padding, align, seed):
    torch.manual_seed(seed)
    net = nn.Conv2d(2, 2, 3, padding=1)
    image, target = torch.rand(2, 1, SIZE, SIZE), torch.rand(2, 1, SIZE, SIZE)
    pair = torch.rand(2, 2, SIZE, SIZE)

    def loss_of(grid):
        warped = F.grid_sample(image, grid, padding_mode=padding, align_corners=align)
        return F.mse_loss(warped, target)

    grid = _grid(0.1 * net(pair), units, align)  # the truth: the grid's own gradient
    g = torch.autograd.grad(loss_of(grid), grid)[0]
    # 'border' clamps each coordinate on its own: its share of zero coordinates
    dead = (g == 0) if padding == "border" else (g == 0).all(dim=-1)
    reads_padding = int(dead.sum()) * 2 >= dead.numel()
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    with gradarg.watch(net) as w:
        opt.zero_grad()
        loss_of(_grid(0.1 * net(pair), units, align)).backward()
        opt.step()
    problems = " ".join(w.problems())
    named = re.search(r"grid_sample read \d+ of \d+ (sample points|grid coordinates) outside "
                      r"its input", problems)
    assert bool(named) == reads_padding, (units, padding, align, dead, problems)
