"""A detection head trained with the page's loss, classification cross entropy plus
``smooth_l1_loss(bbox_pred, gt_bboxes)`` over every predicted box, on 64 anchors of which 12 are
matched to an object and 52 are background.  Background anchors have no box; their regression
targets are the zero offsets the labelling leaves there.  The box loss is not restricted to the
positive anchors, so the 52 background rows pull their box predictions toward offset 0 and
supply most of the box head's gradient: the regressor is trained mainly on anchors that have
nothing to regress.  Every gradient is finite and nonzero; nothing raises.

Source: https://taourl.com/read-2406755.html ("def faster_rcnn_loss(cls_logits, bbox_pred,
gt_labels, gt_bboxes): ... bbox_loss = smooth_l1_loss(bbox_pred, gt_bboxes); total_loss = cls_loss
+ bbox_loss"; "Modern detectors often combine classification and regression losses").  Adapted:
the page's loss on a small anchor head, with ``F.cross_entropy`` for the classification term (the
page constructs ``nn.CrossEntropyLoss`` with the tensors instead of calling it).
"""

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://taourl.com/read-2406755.html"
DESCRIPTION = "box regression loss over all 64 anchors, 52 of them background: negatives dominate"
ASK = []
MUST = [
    [r"negative", r"background", r"positive", r"unmatched", r"\banchors?\b"],
    [
        r"mask\w*",
        r"\bbox (loss|regression|targets?|predictions?)",
        r"bbox",
        r"regress\w*",
        r"smooth[_ ]?l1",
    ],
]
MUST_NOT = [FALSE_OK, CLAIMS_NONFINITE, r"no_grad", r"dead (units?|relu|neurons?)"]


class Head(nn.Module):
    def __init__(self):
        super().__init__()
        self.trunk = nn.Sequential(nn.Linear(10, 32), nn.Tanh())
        self.cls = nn.Linear(32, 2)
        self.box = nn.Linear(32, 4)

    def forward(self, feats):
        h = self.trunk(feats)
        return self.cls(h), self.box(h)


def smooth_l1_loss(pred, target, beta=1.0):
    diff = torch.abs(pred - target)
    loss = torch.where(diff < beta, 0.5 * diff**2 / beta, diff - 0.5 * beta)
    return loss.mean()


def step(watch):
    torch.manual_seed(0)
    model = Head()
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    g = torch.Generator().manual_seed(1)
    feats = torch.randn(64, 10, generator=g)
    labels = torch.zeros(64, dtype=torch.long)
    positive = torch.randperm(64, generator=g)[:12]
    labels[positive] = 1
    gt_bboxes = torch.zeros(64, 4)  # background anchors: no box, zero offsets
    gt_bboxes[positive] = 0.5 * torch.randn(12, 4, generator=g) + 1.0
    # what each anchor's box prediction receives from the box loss, at the step's weights
    _, probe = model(feats)
    box_pred_grad = torch.autograd.grad(smooth_l1_loss(probe, gt_bboxes), probe)[0]
    with watch(model) as w:
        opt.zero_grad()
        cls_logits, bbox_pred = model(feats)
        loss = F.cross_entropy(cls_logits, labels) + smooth_l1_loss(bbox_pred, gt_bboxes)
        loss.backward()
        opt.step()
    grads = {n: p.grad.detach().clone() for n, p in model.named_parameters()}
    return Run(w=w, labels=labels, box_pred_grad=box_pred_grad, grads=grads)


def truth(run):
    neg = run.labels == 0
    assert int(neg.sum()) == 52
    assert bool((run.box_pred_grad[neg].abs().sum(1) > 0).all())  # background boxes are regressed
    share = run.box_pred_grad[neg].norm() / run.box_pred_grad.norm()
    assert share > 0.5  # most of the box loss's gradient comes from background anchors
    for n, gr in run.grads.items():
        assert bool(torch.isfinite(gr).all()) and bool(gr.abs().sum() > 0), n
