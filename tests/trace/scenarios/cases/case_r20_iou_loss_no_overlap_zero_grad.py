"""A box regressor trained with the plain IoU loss ``1 - IoU(pred, target)`` while no predicted box
overlaps its target (the predictions start around the origin, the targets sit 5 to 9 units away).
The intersection's width and height are ``clamp(min(x2) - max(x1), min=0)``: negative before the
clamp for every pair, so the intersection is exactly 0, ``clamp`` passes no gradient, and
``IoU = inter / union`` has derivative ``(d inter * union - inter * d union) / union ** 2 = 0``.
The loss is 1 for every box and every parameter's gradient is exactly zero: the step moves
nothing.  Nothing raises; nothing is NaN.

Source: https://waf-www-bohrium-com-hngfcxduded0fmhr.a03.azurefd.net/en/sciencepedia/feynman/keyword/iou_loss
("Intersection over Union (IoU) is an excellent scale-invariant metric for object detection but a
poor loss function on its own due to its zero-gradient issue with non-overlapping boxes"; "it
provides no learning signal when predicted and ground-truth boxes do not overlap, effectively
leaving the model lost in a flat, uninformative error landscape").  Adapted: a ``Linear(16, 32)``,
``Tanh``, ``Linear(32, 4)`` head predicting ``(cx, cy, log w, log h)`` for 32 examples, boxes as
``(x1, y1, x2, y2)``, SGD at 0.1.
"""

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn

SOURCE = (
    "https://waf-www-bohrium-com-hngfcxduded0fmhr.a03.azurefd.net/en/sciencepedia/feynman/"
    "keyword/iou_loss"
)
DESCRIPTION = "plain 1 - IoU box loss with no predicted box overlapping: every gradient exactly 0"
ASK = []
MUST = [
    [
        r"all[- ]zero",
        r"\bzero grad\w*",
        r"gradients? (is |are |was |were )?(exactly )?(all )?(0|zero)",
        r"no gradient",
        r"(did not|didn't|never) (move|change)",
    ],
    [r"\biou\b", r"overlap\w*", r"clamp\w*", r"intersection"],
]
MUST_NOT = [
    FALSE_OK,
    CLAIMS_NONFINITE,
    r"requires_grad\s*(=|is|was)?\s*False",
    r"not in (the |any )?optimi[sz]er",
]


def to_boxes(out):
    cx, cy, w, h = out[:, 0], out[:, 1], out[:, 2].exp(), out[:, 3].exp()
    return torch.stack([cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2], dim=1)


def box_parts(pred, target):
    """Intersection, union and the smallest enclosing box's area of two (N, 4) box sets."""
    iw = (torch.min(pred[:, 2], target[:, 2]) - torch.max(pred[:, 0], target[:, 0])).clamp(min=0)
    ih = (torch.min(pred[:, 3], target[:, 3]) - torch.max(pred[:, 1], target[:, 1])).clamp(min=0)
    inter = iw * ih
    area_p = (pred[:, 2] - pred[:, 0]) * (pred[:, 3] - pred[:, 1])
    area_t = (target[:, 2] - target[:, 0]) * (target[:, 3] - target[:, 1])
    union = area_p + area_t - inter
    cw = torch.max(pred[:, 2], target[:, 2]) - torch.min(pred[:, 0], target[:, 0])
    ch = torch.max(pred[:, 3], target[:, 3]) - torch.min(pred[:, 1], target[:, 1])
    return inter, union, cw * ch


def iou_loss(pred, target):
    inter, union, _ = box_parts(pred, target)
    return (1 - inter / union).mean()


def giou_loss(pred, target):  # torchvision.ops.generalized_box_iou_loss's formula
    inter, union, enclosing = box_parts(pred, target)
    return (1 - (inter / union - (enclosing - union) / enclosing)).mean()


def data():
    g = torch.Generator().manual_seed(1)
    x = torch.randn(32, 16, generator=g)
    centers = 5 + 4 * torch.rand(32, 2, generator=g)
    sizes = 1 + torch.rand(32, 2, generator=g)
    return x, torch.cat([centers - sizes / 2, centers + sizes / 2], dim=1)


def step(watch, loss_fn=iou_loss):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(16, 32), nn.Tanh(), nn.Linear(32, 4))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    x, target = data()
    before = [p.detach().clone() for p in model.parameters()]
    with watch(model) as w:
        optimizer.zero_grad()
        pred = to_boxes(model(x))
        loss = loss_fn(pred, target)
        loss.backward()
        grads = [p.grad.detach().clone() for p in model.parameters()]
        optimizer.step()
    return Run(w=w, model=model, loss_fn=loss_fn, x=x, pred=pred.detach(), target=target,
               loss=loss.item(), grads=grads, before=before)  # fmt: skip


def truth(run):
    assert run.loss_fn is iou_loss
    inter, _, _ = box_parts(run.pred, run.target)
    assert bool((inter == 0).all())  # no predicted box overlaps its target
    assert run.loss == 1.0
    for g, b, p in zip(run.grads, run.before, run.model.parameters(), strict=True):
        assert bool((g == 0).all())  # exactly zero
        assert torch.equal(p.detach(), b)  # the step moved nothing
