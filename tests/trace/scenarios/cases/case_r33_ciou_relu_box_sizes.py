"""A box-regression head trained with the CIoU loss written from its formula, ``1 - IoU + rho^2 /
c^2 + alpha * v`` with ``v = 4 / pi^2 * (atan(w_gt / h_gt) - atan(w / h))^2`` and ``alpha = v /
((1 - IoU) + v)``, no epsilon anywhere, the predicted width and height kept non-negative with a
``ReLU`` on the head's raw outputs.  For boxes whose two raw size outputs are negative, ``w = h = 0``
and ``w / h = 0 / 0 = NaN``: their aspect term, their loss and the mean loss are NaN.  A box with
only ``h = 0`` is finite in the forward (``atan(inf) = pi / 2``) but NaN in the backward
(``-w / h^2 = -inf`` times ``atan'(inf) = 0``).  Every gradient of the head is NaN.

Source: https://csh970605.github.io/posts/CIOU_Loss ("CIOU introduces two new concepts compared to
IOU loss"; "Loss_CIoU = 1 - IoU + p^2(b, b^gt) / c^2 + αv"; "v = 4/π (arctan(w^gt / h^gt) - arctan
(w / h))^2 = measures the consistency of the aspect ratio"; "α = v / ((1 - IoU) + v)").  Adapted: 32
region features of width 8, a head ``Linear(8, 32), ReLU, Linear(32, 4)`` (its last bias at zero) giving centre offsets and
sizes, ground-truth boxes with sizes in 0.2 to 1, the loss averaged over the boxes, SGD at 1e-2.
"""

import math

import torch
from scenario_kit import FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://csh970605.github.io/posts/CIOU_Loss"
DESCRIPTION = "CIoU with ReLU box sizes and no eps: w = h = 0 gives atan(0/0), NaN loss"
ASK = []
MUST = [
    [r"\bnan\b|non-?finite"],
    [
        r"0 ?/ ?0|zero ?/ ?zero|divi\w* by zero",
        r"\beps\w*",
        r"\bw ?/ ?h\b|aspect|atan|arctan",
        r"\brelu\b",
        r"width|height|\bsizes?\b",
    ],
]
MUST_NOT = [FALSE_OK]


def ciou(pred, target, eps, alpha_grad):
    px, py, pw, ph = pred.unbind(-1)
    tx, ty, tw, th = target.unbind(-1)
    iw = (torch.min(px + pw / 2, tx + tw / 2) - torch.max(px - pw / 2, tx - tw / 2)).clamp(min=0)
    ih = (torch.min(py + ph / 2, ty + th / 2) - torch.max(py - ph / 2, ty - th / 2)).clamp(min=0)
    inter = iw * ih
    iou = inter / (pw * ph + tw * th - inter + eps)
    cw = torch.max(px + pw / 2, tx + tw / 2) - torch.min(px - pw / 2, tx - tw / 2)
    ch = torch.max(py + ph / 2, ty + th / 2) - torch.min(py - ph / 2, ty - th / 2)
    rho2 = (px - tx) ** 2 + (py - ty) ** 2
    v = 4 / math.pi**2 * (torch.atan(tw / th) - torch.atan(pw / (ph + eps))) ** 2
    if alpha_grad:
        alpha = v / ((1 - iou) + v + eps)
    else:
        with torch.no_grad():
            alpha = v / ((1 - iou) + v + eps)
    return 1 - iou + rho2 / (cw**2 + ch**2 + eps) + alpha * v


def step(watch, exp_sizes=False):
    torch.manual_seed(0)
    head = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 4))
    nn.init.zeros_(head[2].bias)
    optimizer = torch.optim.SGD(head.parameters(), lr=1e-2)
    g = torch.Generator().manual_seed(7)
    feats = torch.randn(32, 8, generator=g)
    centres = torch.rand(32, 2, generator=g)
    target = torch.cat([centres, 0.2 + 0.8 * torch.rand(32, 2, generator=g)], -1)
    with watch(head) as w:
        optimizer.zero_grad()
        raw = head(feats)
        sizes = raw[:, 2:].exp() if exp_sizes else F.relu(raw[:, 2:])
        pred = torch.cat([centres + 0.1 * raw[:, :2], sizes], -1)
        per_box = ciou(pred, target, 1e-7 if exp_sizes else 0.0, alpha_grad=not exp_sizes)
        loss = per_box.mean()
        loss.backward()
        grads = {n: p.grad.detach().clone() for n, p in head.named_parameters()}
        optimizer.step()
    return Run(w=w, loss=float(loss.detach()), grads=grads, sizes=sizes.detach(),
               per_box=per_box.detach())  # fmt: skip


def truth(run):
    both = (run.sizes == 0).all(-1)
    assert bool(both.any())  # some boxes with w = h = 0
    assert bool(torch.isnan(run.per_box[both]).all())
    assert bool(torch.isfinite(run.per_box[(run.sizes > 0).all(-1)]).all())
    assert math.isnan(run.loss)
    for n, g in run.grads.items():
        assert bool(torch.isnan(g).any()), n
