"""Control: the same box regressor, data and non-overlapping boxes, trained with the generalised
IoU loss ``1 - (IoU - (C - U) / C)`` (``C`` the area of the smallest box enclosing both, ``U`` the
union): the penalty term depends on the predicted corners even when the intersection is 0, so every
parameter gets a finite, nonzero gradient and moves; the loss is above 1 and falls.

Source: https://www.shadecoder.com/topics/iou-loss-a-comprehensive-guide-for-2025 ("Standard IoU
loss: loss = 1 - IoU(pred, gt), which encourages maximizing overlap"; "Generalized IoU (GIoU): adds
a penalty for non-overlapping boxes by considering the smallest enclosing box").  Adapted as the
bug; the loss written out (torchvision, whose ``generalized_box_iou_loss`` has this formula, is not
installed here).
"""

import torch
from case_r20_iou_loss_no_overlap_zero_grad import box_parts, giou_loss, to_boxes
from case_r20_iou_loss_no_overlap_zero_grad import step as _step
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = "https://www.shadecoder.com/topics/iou-loss-a-comprehensive-guide-for-2025"
DESCRIPTION = "control: GIoU loss on the same non-overlapping boxes: nonzero gradients, trains"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [CLAIMS_NONFINITE, CLAIMS_ERROR, r"all[- ]zero", r"\bzero grad\w*", r"\bdead\b"]


def step(watch):
    return _step(watch, loss_fn=giou_loss)


def truth(run):
    assert run.loss_fn is giou_loss
    inter, _, _ = box_parts(run.pred, run.target)
    assert bool((inter == 0).all()) and run.loss > 1.0  # no overlap: GIoU below 0
    for g, b, p in zip(run.grads, run.before, run.model.parameters(), strict=True):
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0)
        assert not torch.equal(p.detach(), b)
    with torch.no_grad():
        assert float(giou_loss(to_boxes(run.model(run.x)), run.target)) < run.loss  # it learns
