"""A Mask R-CNN-style mask branch: a backbone of stride 4, RoIAlign pooling each box to 7 x 7 by
bilinear sampling, a mask head with one 7 x 7 mask per class and a per-pixel binary cross-entropy
on the ground-truth class's mask.  RoIAlign is a hand-written function with torchvision's signature,
``roi_align(features, boxes, output_size, spatial_scale=1.0)``, and the call leaves
``spatial_scale`` at its default: the boxes, in image pixels (between 10 and 32 on a 32 x 32
image), are read as feature-map coordinates on an 8 x 8 map, so every sampling point falls outside
it and the zero padding returns exactly 0.  The pooled features are all zero: the backbone and the
mask head's first convolution weight get exactly zero gradient (only biases learn, a constant
mask).  Nothing raises; the loss is finite.

Source: https://cnblogs.com/rosyYY/p/8686847.html ("ROIlign Layer而不是ROIPool。这就不会像ROIPool那样将
(x / spatial_scale)分数舍入为整数,相反,它执行双线性插值来找出那些浮点值处的像素"; "空间尺度基本上是图像大学/ FMap大学
(H / h),在这种情况下它也被称为步幅(stride)。通常224/14 = 16").  Adapted: a backbone ``Conv2d(3, 8, 3, 2),
ReLU, Conv2d(8, 16, 3, 2), ReLU``, RoIAlign as ``F.grid_sample`` (one sample per bin centre), a
head ``Conv2d(16, 16, 3), ReLU, Conv2d(16, 3, 1)``, 8 boxes over two images with classes 0 and 2,
SGD at 0.02.
"""

import math

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://cnblogs.com/rosyYY/p/8686847.html"
DESCRIPTION = "roi_align without spatial_scale=1/4: boxes outside the feature map, features all 0"
ASK = ["backbone.0.weight"]
MUST = [
    [r"spatial_scale", r"stride", r"scal\w*", r"image (coordinates|pixels)"],
    [
        r"outside",
        r"zero[- ]pad\w*|padding",
        r"all[- ]zeros?|exactly zero|zero (features|gradient)",
        r"out of (bounds|range)",
    ],
]
MUST_NOT = [FALSE_OK, CLAIMS_NONFINITE, r"requires_grad\s*(=|is|was)?\s*False"]
OUT, CLASSES = 7, 3


def roi_align(features, boxes, output_size, spatial_scale=1.0):
    """``boxes``: rows ``(image, x1, y1, x2, y2)`` in image pixels, as torchvision takes them."""
    _, _, h, w = features.shape
    steps = (torch.arange(output_size, dtype=features.dtype) + 0.5) / output_size
    pooled = []
    for image, x1, y1, x2, y2 in boxes.tolist():
        xs = (x1 + (x2 - x1) * steps) * spatial_scale / w * 2 - 1
        ys = (y1 + (y2 - y1) * steps) * spatial_scale / h * 2 - 1
        grid = torch.stack(torch.meshgrid(ys, xs, indexing="ij")[::-1], -1)
        pooled.append(F.grid_sample(features[int(image)][None], grid[None], align_corners=False)[0])
    return torch.stack(pooled)


class MaskBranch(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Sequential(
            nn.Conv2d(3, 8, 3, 2, 1), nn.ReLU(), nn.Conv2d(8, 16, 3, 2, 1), nn.ReLU()
        )
        self.head = nn.Sequential(nn.Conv2d(16, 16, 3, 1, 1), nn.ReLU(), nn.Conv2d(16, CLASSES, 1))


def data():
    g = torch.Generator().manual_seed(12)
    images = torch.rand(2, 3, 32, 32, generator=g)
    corner = 10 + 10 * torch.rand(8, 2, generator=g)
    size = 6 + 6 * torch.rand(8, 2, generator=g)
    boxes = torch.cat([torch.arange(8)[:, None] % 2, corner, (corner + size).clamp(max=32)], 1)
    classes = torch.tensor([0, 2, 0, 2, 2, 0, 0, 2])
    masks = (torch.rand(8, OUT, OUT, generator=g) < 0.5).float()
    return images, boxes.float(), classes, masks


def step(watch, spatial_scale=None):
    torch.manual_seed(0)
    model = MaskBranch()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.02)
    images, boxes, classes, masks = data()
    with watch(model) as w:
        optimizer.zero_grad()
        feats = model.backbone(images)
        if spatial_scale is None:
            pooled = roi_align(feats, boxes, OUT)
        else:
            pooled = roi_align(feats, boxes, OUT, spatial_scale=spatial_scale)
        logits = model.head(pooled)[torch.arange(8), classes]  # the ground-truth class's mask
        loss = F.binary_cross_entropy_with_logits(logits, masks)
        loss.backward()
        grads = {n: p.grad.detach().clone() for n, p in model.named_parameters()}
        optimizer.step()
    return Run(w=w, loss=float(loss.detach()), grads=grads, pooled=pooled.detach(),
               feat_shape=tuple(feats.shape))  # fmt: skip


def truth(run):
    assert run.feat_shape[-2:] == (8, 8)
    assert math.isfinite(run.loss)
    assert bool((run.pooled == 0).all())
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()), n
        live = n in ("head.0.bias", "head.2.weight", "head.2.bias")
        assert bool(g.abs().sum() > 0) == live, n
