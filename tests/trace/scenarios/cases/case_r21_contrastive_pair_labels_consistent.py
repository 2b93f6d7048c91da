"""Control: the same siamese encoder and pairs trained with the contrastive loss written for the
labels it gets, ``L = mean(y * 0.5 * d^2 + (1 - y) * 0.5 * max(0, margin - d)^2)`` with ``y = 1``
for similar pairs: the similar pairs are pulled together and the dissimilar pairs inside the
margin pushed apart (those already beyond it contribute nothing, as the loss is built to do).
After the step the dissimilar pairs are farther apart (the encoder grows its outputs) and the
similar pairs closer relative to them; every gradient is finite and nonzero.

Source: https://prof.lexailabs.com/practice/contrastive-loss ("With Euclidean distance and label
(1 = similar, 0 = dissimilar)"; "L = 1/N sum_i [ y_i d_i^2 + (1 - y_i) max(0, margin - d_i)^2 ]";
"Dissimilar pairs already farther than margin contribute 0").  Adapted as the bug: the same
``Linear(8, 16)``, ``Tanh``, ``Linear(16, 4, bias=False)`` encoder and 64 pairs, the factor 0.5
and margin 2 of the bug's page, SGD at 0.1.
"""

import torch
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK, Run
from torch import nn

SOURCE = "https://prof.lexailabs.com/practice/contrastive-loss"
DESCRIPTION = "control: contrastive loss with y=1 for similar pairs, labels to match: healthy"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    r"all[- ]zero",
    r"\bzero grad\w*",
    r"\bdead\b",
    r"label\w*[^\n]{0,80}(swap|invert|revers|flip|opposite)",
]
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


def contrastive(d, y):  # y = 1 for similar pairs
    return (y * 0.5 * d**2 + (1 - y) * 0.5 * torch.clamp(MARGIN - d, min=0) ** 2).mean()


def step(watch):
    encoder = make_encoder()
    optimizer = torch.optim.SGD(encoder.parameters(), lr=0.1)
    x1, x2, is_same = pairs()
    before = [p.detach().clone() for p in encoder.parameters()]
    with torch.no_grad():
        d_before = distances(encoder, x1, x2)
    with watch(encoder) as w:
        optimizer.zero_grad()
        loss = contrastive(distances(encoder, x1, x2), is_same)
        loss.backward()
        grads = [p.grad.detach().clone() for p in encoder.parameters()]
        optimizer.step()
    with torch.no_grad():
        d_after = distances(encoder, x1, x2)
    return Run(w=w, model=encoder, before=before, grads=grads, is_same=is_same,
               d_before=d_before, d_after=d_after)  # fmt: skip


def truth(run):
    same = run.is_same == 1
    assert float(run.d_after[~same].mean()) > float(run.d_before[~same].mean())  # pushed apart
    ratio_before = run.d_before[same].mean() / run.d_before[~same].mean()
    ratio_after = run.d_after[same].mean() / run.d_after[~same].mean()
    assert float(ratio_after) < float(ratio_before)  # similar pairs relatively closer
    for g, b, p in zip(run.grads, run.before, run.model.parameters(), strict=True):
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0)
        assert not torch.equal(p.detach(), b)
