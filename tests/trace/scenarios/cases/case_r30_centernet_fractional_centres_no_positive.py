"""A CenterNet-style heatmap head trained with the paper's penalty-reduced focal loss, normalised by
the number of keypoints ``N`` (pixels where the target heatmap is exactly 1), with the target
Gaussians drawn at the objects' exact, fractional centres in output coordinates instead of at the
rounded integer centres.  No pixel of the target is then exactly 1: ``N = 0``, the positive term is
0 and the loss ``-(0 + negative term) / 0`` is ``inf``; the backward's division by zero makes every
gradient of the network NaN (the head's and the backbone's).  Nothing raises.

Source: https://johal.in/real-time-object-detection-with-centernet-implementation-guide ("CenterNet
Heatmap Prediction ... Y_xyc = e^-((x-px)^2+(y-py)^2)/2 sigma^2 ... p = Center point coordinates";
"Modified Focal Loss: L_heat = -1/N sum_xyc {(1 - Y_xyc)^alpha log(Y_xyc) if Y_xyc = 1, (1 -
Y_xyc)^beta (Y_xyc)^alpha log(1 - Y_xyc) otherwise}").  Adapted: the centre ``p`` taken as the
fractional box centre (the page does not say it is rounded); 8 images of ``3 x 32 x 32`` with 1 to 3
boxes of 2 classes, a backbone ``Conv2d(3, 16, 3, padding=1), ELU, Conv2d(16, 16, 3, stride=2,
padding=1), ELU`` (output stride 2), a heatmap head ``Conv2d(16, 2, 1)`` with bias ``-2.19`` as in
the paper, the prediction clamped to ``[1e-4, 1 - 1e-4]`` as in the reference code, ``alpha = 2``,
``beta = 4``, Adam at 1e-3.
"""

import math

import torch
from scenario_kit import FALSE_OK, Run
from torch import nn

SOURCE = "https://johal.in/real-time-object-detection-with-centernet-implementation-guide"
DESCRIPTION = "CenterNet Gaussians at fractional centres: no target pixel == 1, N = 0, inf, NaN"
ASK = []
MUST = [
    [r"\bnan\b|\binf\b|non-?finite|infinit\w*"],
    [
        r"divi\w* by (zero|0)|/ ?0\b|zero (positives|keypoints)|no (positive|keypoint|peak)",
        r"num_pos|\bN\s?=\s?0",
        r"(fraction\w*|float\w*|non-?integer|round\w*|int\(?)[^\n]{0,40}(center|centre)",
        r"(center|centre)s?[^\n]{0,40}(fraction\w*|float\w*|non-?integer|not (rounded|integer))",
        r"== ?1|exactly 1|equals? 1|peak",
    ],
]
MUST_NOT = [FALSE_OK, r"\bdead\b", r"requires_grad\s*(=|is|was)?\s*False"]
SIZE, OUT, CLASSES = 32, 16, 2


class CenterNetHead(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Sequential(
            nn.Conv2d(3, 16, 3, padding=1),
            nn.ELU(),
            nn.Conv2d(16, 16, 3, stride=2, padding=1),
            nn.ELU(),
        )
        self.heatmap = nn.Conv2d(16, CLASSES, 1)
        nn.init.constant_(self.heatmap.bias, -2.19)

    def forward(self, images):
        return self.heatmap(self.backbone(images))


def scene(round_centres):
    g = torch.Generator().manual_seed(1)
    images = 0.1 * torch.randn(8, 3, SIZE, SIZE, generator=g)
    target = torch.zeros(8, CLASSES, OUT, OUT)
    ys, xs = torch.meshgrid(torch.arange(OUT).float(), torch.arange(OUT).float(), indexing="ij")
    for b in range(8):
        for _ in range(int(torch.randint(1, 4, (1,), generator=g))):
            c = int(torch.randint(0, CLASSES, (1,), generator=g))
            x0, y0 = (torch.rand(2, generator=g) * 20).tolist()
            w, h = (4 + torch.rand(2, generator=g) * 8).tolist()
            images[b, c, int(y0) : int(y0 + h), int(x0) : int(x0 + w)] += 1.0
            cx, cy = (x0 + w / 2) / 2, (y0 + h / 2) / 2  # centre in output coordinates
            if round_centres:
                cx, cy = int(cx), int(cy)
            sigma = max(w, h) / 2 / 6
            blob = torch.exp(-((xs - cx) ** 2 + (ys - cy) ** 2) / (2 * sigma**2))
            target[b, c] = torch.maximum(target[b, c], blob)
    return images, target


def focal_loss(logits, target, alpha=2, beta=4):
    pred = torch.sigmoid(logits).clamp(1e-4, 1 - 1e-4)
    pos = target.eq(1).float()
    neg = 1 - pos
    pos_loss = (torch.log(pred) * (1 - pred) ** alpha * pos).sum()
    neg_loss = (torch.log(1 - pred) * pred**alpha * (1 - target) ** beta * neg).sum()
    num_pos = pos.sum()
    return -(pos_loss + neg_loss) / num_pos, num_pos


def step(watch, round_centres=False):
    torch.manual_seed(0)
    model = CenterNetHead()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    images, target = scene(round_centres)
    with watch(model) as w:
        optimizer.zero_grad()
        logits = model(images)
        loss, num_pos = focal_loss(logits, target)
        loss.backward()
        grads = {n: p.grad.detach().clone() for n, p in model.named_parameters()}
        optimizer.step()
    return Run(
        w=w,
        model=model,
        target=target,
        num_pos=int(num_pos),
        loss=float(loss.detach()),
        grads=grads,
    )


def truth(run):
    assert float(run.target.max()) < 1 and run.num_pos == 0
    assert run.loss == math.inf
    for n, g in run.grads.items():
        assert bool(torch.isnan(g).any()), n
