"""Control, a step suspected wrongly: a DETR-style set prediction step.  Six learned queries
decode class logits (3 classes and "no object") and sigmoid boxes per image; the Hungarian
matching is solved by ``scipy.optimize.linear_sum_assignment`` on a cost matrix (``-prob`` of the
target class plus 5 times the L1 box distance) computed without gradient and turned into NumPy;
the loss is the cross entropy over all queries (unmatched ones against "no object") plus the L1
box loss on the matched pairs, indexed with the matching's integer indices.  The assignment has no
gradient and needs none: the loss is computed on the network's own tensors, and every parameter
(backbone, queries, decoder, both heads; every query embedding row through the class loss) gets a
finite, nonzero gradient.

Source: https://mangohost.net/blog/introduction-to-detr-hungarian-algorithm-part-1 ("We compute a
cost matrix C[i,j] representing the matching cost between prediction i and ground truth j;
Hungarian algorithm finds the permutation that minimizes the total assignment cost; Unmatched
predictions are assigned to a special 'no object' class"; ``class_cost = -prob[:, gt_labels]``,
``bbox_cost = torch.cdist(pred_boxes, gt_boxes, p=1)``).  Adapted: no GIoU term, two images of
two and three objects.
"""

import torch
from scenario_kit import CLAIMS_NONFINITE, HEALTHY_OK, Run
from scipy.optimize import linear_sum_assignment
from torch import nn
from torch.nn import functional as F

SOURCE = "https://mangohost.net/blog/introduction-to-detr-hungarian-algorithm-part-1"
DESCRIPTION = "control: DETR-style loss, Hungarian matching in NumPy on a no-grad cost: healthy"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    r"all-zero",
    r"no gradient",
    r"dead (units?|relu|neurons?)",
]
QUERIES, CLASSES = 6, 3
NO_OBJECT = CLASSES


class TinyDETR(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Sequential(nn.Linear(10, 32), nn.Tanh())
        self.queries = nn.Embedding(QUERIES, 32)
        self.decoder = nn.Sequential(nn.Linear(32, 32), nn.Tanh())
        self.class_head = nn.Linear(32, CLASSES + 1)
        self.box_head = nn.Linear(32, 4)

    def forward(self, x):
        h = self.decoder(self.backbone(x)[:, None, :] + self.queries.weight[None])
        return self.class_head(h), self.box_head(h).sigmoid()


def match(logits, boxes, labels, tgt_boxes):
    with torch.no_grad():
        cost = -logits.softmax(-1)[:, labels] + 5 * torch.cdist(boxes, tgt_boxes, p=1)
    rows, cols = linear_sum_assignment(cost.numpy())
    return torch.as_tensor(rows, dtype=torch.long), torch.as_tensor(cols, dtype=torch.long)


def step(watch):
    torch.manual_seed(0)
    model = TinyDETR()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    g = torch.Generator().manual_seed(1)
    x = torch.randn(2, 10, generator=g)
    targets = [
        (
            torch.randint(0, CLASSES, (n,), generator=g),
            0.2 + 0.6 * torch.rand(n, 4, generator=g),
        )
        for n in (2, 3)
    ]
    grads, matched = [], []
    with watch(model) as w:
        for _ in range(2):
            opt.zero_grad()
            logits, boxes = model(x)
            class_targets = torch.full((2, QUERIES), NO_OBJECT)
            box_loss = 0.0
            for i, (labels, tgt_boxes) in enumerate(targets):
                rows, cols = match(logits[i], boxes[i], labels, tgt_boxes)
                class_targets[i, rows] = labels[cols]
                box_loss = box_loss + F.l1_loss(boxes[i, rows], tgt_boxes[cols])
                matched.append(len(rows))
            loss = F.cross_entropy(logits.reshape(-1, CLASSES + 1), class_targets.reshape(-1))
            loss = loss + 5 * box_loss
            loss.backward()
            grads.append({n: p.grad.detach().clone() for n, p in model.named_parameters()})
            opt.step()
    return Run(w=w, grads=grads, matched=matched)


def truth(run):
    assert run.matched == [2, 3, 2, 3]
    for grads in run.grads:
        for n, gr in grads.items():
            assert bool(torch.isfinite(gr).all()) and bool(gr.abs().sum() > 0), n
        assert bool((grads["queries.weight"].abs().sum(1) > 0).all())
