"""A siamese encoder trained with the pairwise contrastive loss of an exercise page, ``L = (1 - Y)
* 0.5 * D^2 + Y * 0.5 * max(0, margin - D)^2``, whose formula takes ``Y = 0`` for similar pairs,
on pairs labelled the other way (``1`` = same, as most pair datasets and the page's own text
further down have it).  The loss pulls the dissimilar pairs together and pushes the similar pairs
(distance about 0.02) apart towards the margin: after the step the dissimilar pairs are closer
(the encoder shrinks its outputs) and the similar pairs farther apart relative to them.  Every
gradient is finite and nonzero; nothing raises.

Source: https://click4ai.perfionixai.com/problems/contrastive-loss ("L = (1 - Y) * 0.5 * D^2 + Y *
0.5 * max(0, margin - D)^2"; "Y = label (0 for similar pairs, 1 for dissimilar pairs)"; "margin =
minimum desired distance for dissimilar pairs (default 2)"; and further down, "For similar pairs
(label=1), the loss is proportional to the squared distance").  Adapted: a ``Linear(8, 16)``,
``Tanh``, ``Linear(16, 4, bias=False)`` encoder shared by both sides (a last bias cancels in the
difference of the two embeddings: its gradient would be exactly 0), 64 pairs of which 32 similar
(the second input is the first plus noise of 0.05) and 32 independent, labels ``is_same``, margin
2, SGD at 0.1.
"""

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn

SOURCE = "https://click4ai.perfionixai.com/problems/contrastive-loss"
DESCRIPTION = "contrastive loss whose Y=0 means similar, fed is_same labels: pairs pushed wrong way"
ASK = []
MUST = [
    [
        r"label\w*[^\n]{0,80}(swap|invert|revers|flip|opposite|convention|wrong way)",
        r"(swap|invert|revers|flip)\w*[^\n]{0,80}label",
        r"similar pairs?[^\n]{0,80}(apart|push|repel)",
        r"(dissimilar|negative) pairs?[^\n]{0,80}(together|pull|attract)",
        r"\b1 ?- ?(y|label)\b",
    ],
]
MUST_NOT = [FALSE_OK, CLAIMS_NONFINITE]
MARGIN = 2.0


def make_encoder():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(8, 16), nn.Tanh(), nn.Linear(16, 4, bias=False))


def pairs():
    g = torch.Generator().manual_seed(1)
    x1 = torch.randn(64, 8, generator=g)
    x2 = torch.randn(64, 8, generator=g)
    is_same = torch.zeros(64)
    is_same[:32] = 1.0
    x2[:32] = x1[:32] + 0.05 * torch.randn(32, 8, generator=g)
    return x1, x2, is_same


def distances(encoder, x1, x2):
    return (encoder(x1) - encoder(x2)).pow(2).sum(1).sqrt()


def page_loss(d, y):  # the page's formula: Y = 0 for similar pairs
    return ((1 - y) * 0.5 * d**2 + y * 0.5 * torch.clamp(MARGIN - d, min=0) ** 2).mean()


def step(watch):
    encoder = make_encoder()
    optimizer = torch.optim.SGD(encoder.parameters(), lr=0.1)
    x1, x2, is_same = pairs()
    before = [p.detach().clone() for p in encoder.parameters()]
    with torch.no_grad():
        d_before = distances(encoder, x1, x2)
    with watch(encoder) as w:
        optimizer.zero_grad()
        loss = page_loss(distances(encoder, x1, x2), is_same)
        loss.backward()
        grads = [p.grad.detach().clone() for p in encoder.parameters()]
        optimizer.step()
    with torch.no_grad():
        d_after = distances(encoder, x1, x2)
    return Run(w=w, model=encoder, before=before, grads=grads, is_same=is_same,
               d_before=d_before, d_after=d_after)  # fmt: skip


def truth(run):
    same = run.is_same == 1
    assert float(run.d_before[same].mean()) < 0.1 * float(run.d_before[~same].mean())
    assert float(run.d_after[~same].mean()) < float(run.d_before[~same].mean())  # pulled in
    ratio_before = run.d_before[same].mean() / run.d_before[~same].mean()
    ratio_after = run.d_after[same].mean() / run.d_after[~same].mean()
    assert float(ratio_after) > float(ratio_before)  # similar pairs relatively farther apart
    for g in run.grads:
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0)
