"""An embedding network trained with ``F.triplet_margin_loss`` (margin 0.5) on triplets drawn at
random once, when the dataset was built: 24 (anchor, positive, negative) triples over a batch of 48
points in 4 classes.  After a few (unwatched) steps every one of those triplets already has its
negative farther than its positive by more than the margin: the watched step's loss is exactly 0
and every parameter's gradient is exactly zero, so ``optimizer.step()`` moves nothing, although
47 of the batch's 48 anchors still have a hardest positive not separated from their hardest
negative by the margin.  Nothing is broken in autograd: random triplets are easy, and easy
triplets give no gradient.  Nothing raises.

Source: https://www.cruxible.dev/learn/ml55-triplet-loss ("Most random triplets are already easy
and give no gradient.  Performance depends on mining informative triplets: Hard negatives are
negatives closer than the positive.  Semi hard negatives are farther than the positive but still
inside the margin").  Adapted: a tanh MLP encoder (last layer without bias) on 4 clusters of
8-dimensional points, plain SGD (no momentum); the warm-up stops at the first step whose
loss is 0.
"""

import torch
from scenario_kit import CLAIMS_NONFINITE, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://www.cruxible.dev/learn/ml55-triplet-loss"
DESCRIPTION = "fixed random triplets all beyond the margin: loss 0, all-zero grad, nothing moves"
ASK = ["0.weight"]
MUST = [
    [
        r"(all-zero|zero) gradient",
        r"gradient[^\n]{0,30}\b(is |was |are |were )?(all |exactly )?(zero|0)\b",
        r"did not move",
    ],
    [
        r"margin",
        r"triplet",
        r"easy",
        r"clamp",
        r"\bmax\(0",
        r"loss (is |was )?(exactly )?(0|zero)\b",
        r"zero loss",
        r"loss of 0\b",
    ],
]
MUST_NOT = [
    r"^summary: (gradients )?ok[^\n]*nonzero",
    CLAIMS_NONFINITE,
    r"no_grad",
    r"detach",
    r"dead (units?|relu|neurons?)",
    r"not in (the |any )?optimizer",
]
MARGIN = 0.5


def make_encoder():
    return nn.Sequential(nn.Linear(8, 16), nn.Tanh(), nn.Linear(16, 8, bias=False))


def batch():
    g = torch.Generator().manual_seed(1)
    centers = 2 * torch.randn(4, 8, generator=g)
    labels = torch.arange(4).repeat_interleave(12)
    x = centers[labels] + 0.8 * torch.randn(48, 8, generator=g)
    return x, labels


def random_triplets(labels):
    g = torch.Generator().manual_seed(2)
    same = labels[:, None] == labels[None]
    anchors = torch.randperm(len(labels), generator=g)[:24]

    def pick(mask):
        idx = mask.nonzero().flatten()
        return idx[torch.randint(0, len(idx), (1,), generator=g)]

    others = torch.arange(len(labels))
    pos = torch.cat([pick(same[i] & (others != i)) for i in anchors])
    neg = torch.cat([pick(~same[i]) for i in anchors])
    return anchors, pos, neg


def batch_hard(e, labels):
    d = torch.cdist(e, e)
    same = labels[:, None] == labels[None]
    hardest_pos = (d * same).amax(1)
    hardest_neg = d.masked_fill(same, float("inf")).amin(1)
    return F.relu(hardest_pos - hardest_neg + MARGIN).mean(), hardest_pos, hardest_neg


def step(watch, mining: bool = False):
    torch.manual_seed(0)
    model = make_encoder()
    opt = torch.optim.SGD(model.parameters(), lr=0.2)
    x, labels = batch()
    a, p, n = random_triplets(labels)
    warm = 0
    while warm < 500:  # earlier steps on the fixed random triplets, until their loss is 0
        e = model(x)
        loss = F.triplet_margin_loss(e[a], e[p], e[n], margin=MARGIN)
        if loss.item() == 0:
            break
        opt.zero_grad()
        loss.backward()
        opt.step()
        warm += 1
    before = [q.detach().clone() for q in model.parameters()]
    with watch(model) as w:
        opt.zero_grad()
        e = model(x)
        if mining:
            loss = batch_hard(e, labels)[0]
        else:
            loss = F.triplet_margin_loss(e[a], e[p], e[n], margin=MARGIN)
        loss.backward()
        opt.step()
    grads = {name: q.grad.detach().clone() for name, q in model.named_parameters()}
    moved = any(
        not torch.equal(q.detach(), b) for q, b in zip(model.parameters(), before, strict=True)
    )
    with torch.no_grad():
        _, hp, hn = batch_hard(model(x), labels)
    violating = int((hp + MARGIN > hn).sum())
    return Run(w=w, warm=warm, loss=loss.item(), grads=grads, moved=moved, violating=violating)


def truth(run):
    assert 0 < run.warm < 500
    assert run.loss == 0.0
    for name, gr in run.grads.items():
        assert bool((gr == 0).all()), name
    assert not run.moved
    assert run.violating > 0  # hard triplets are still in the batch
