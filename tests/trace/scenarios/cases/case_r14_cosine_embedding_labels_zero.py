"""A siamese encoder trained with ``nn.CosineEmbeddingLoss`` on pairs labelled 1 (same class) and
0 (different class), the 0/1 convention of ``BCELoss``.  The loss only knows 1 and -1: for a label
of 0 neither branch applies and the pair's loss is exactly 0 (PyTorch's ``where(y == 1, ...)`` and
``where(y == -1, ...)`` both pick 0), still counted in the mean.  The 20 dissimilar pairs of the
batch of 48 push nothing apart; the gradient is exactly that of the similar pairs' ``1 - cos`` term
alone, which only pulls embeddings together (the collapse the thread's reader sees).  Every
gradient is finite and nonzero; nothing raises.

Source: https://sachinruk.github.io/programming_tips/cosine-embedding-loss.html ("a label (y)
indicating that we need to move these embeddings closer (y = 1) and further if not (y = 0)"; the
formula it quotes has ``max(0, cos(x1, x2) - margin)`` "if y = -1").  Adapted: a tanh MLP encoder
on 4 clusters of 16-dimensional points, margin 0.
"""

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn

SOURCE = "https://sachinruk.github.io/programming_tips/cosine-embedding-loss.html"
DESCRIPTION = "CosineEmbeddingLoss with labels 1/0: y=0 pairs give exactly 0 loss, never pushed"
ASK = []
MUST = [
    [
        r"CosineEmbedding",
        r"cosine[_ ]embedding",
        r"label\w*[^\n]{0,60}(-1|minus one|0\b|zero)",
        r"(-1|minus one)[^\n]{0,60}label",
        r"target\w*[^\n]{0,60}(-1|minus one)",
    ],
    [
        r"(dissimilar|negative|different)[^\n]{0,60}(pairs?|examples?)",
        r"y ?== ?0",
        r"(label|target)s? (of )?0\b",
        r"zero loss",
        r"loss (is |of )?(exactly )?(0|zero)\b",
    ],
]
MUST_NOT = [
    FALSE_OK,
    CLAIMS_NONFINITE,
    r"dead (units?|relu|neurons?)",
    r"no_grad",
    r"not in (the |any )?optimizer",
]


def make_encoder():
    return nn.Sequential(nn.Linear(16, 32), nn.Tanh(), nn.Linear(32, 8))


def pairs():
    g = torch.Generator().manual_seed(1)
    centers = 2 * torch.randn(4, 16, generator=g)
    c1 = torch.randint(0, 4, (48,), generator=g)
    same = torch.arange(48) % 12 < 7  # 28 similar pairs, 20 dissimilar
    c2 = torch.where(same, c1, (c1 + torch.randint(1, 4, (48,), generator=g)) % 4)
    x1 = centers[c1] + 0.5 * torch.randn(48, 16, generator=g)
    x2 = centers[c2] + 0.5 * torch.randn(48, 16, generator=g)
    return x1, x2, same


def step(watch, minus_one: bool = False):
    torch.manual_seed(0)
    model = make_encoder()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    x1, x2, same = pairs()
    y = torch.where(same, 1.0, -1.0 if minus_one else 0.0)
    criterion = nn.CosineEmbeddingLoss()
    with watch(model) as w:
        opt.zero_grad()
        loss = criterion(model(x1), model(x2), y)
        loss.backward()
        grads = [p.grad.detach().clone() for p in model.parameters()]
        opt.step()
    # the same encoder (weights before the step) with the similar pairs' term alone
    torch.manual_seed(0)
    ref = make_encoder()
    e1, e2 = ref(x1), ref(x2)
    per_pair = nn.CosineEmbeddingLoss(reduction="none")(e1, e2, y)
    cos = torch.cosine_similarity(e1, e2)
    pos_only = torch.where(same, 1 - cos, torch.zeros_like(cos)).mean()
    pos_grads = torch.autograd.grad(pos_only, list(ref.parameters()))
    return Run(
        w=w,
        same=same,
        per_pair=per_pair.detach(),
        cos=cos.detach(),
        grads=grads,
        pos_grads=pos_grads,
    )


def truth(run):
    dissimilar = ~run.same
    assert int(dissimilar.sum()) == 20
    assert bool((run.per_pair[dissimilar] == 0).all())
    assert bool((run.cos[dissimilar] > 0).any())  # some would be pushed apart with -1
    for gr, gp in zip(run.grads, run.pos_grads, strict=True):
        assert bool(torch.isfinite(gr).all()) and bool(gr.abs().sum() > 0)
        assert torch.allclose(gr, gp, atol=1e-7)  # only the similar pairs count
