"""A healthy R-Drop step that looks like a duplicated batch: the 64 inputs are concatenated with
themselves and sent through the network in one forward, so that dropout draws a different mask for
each copy; the loss is the two halves' mean cross-entropy plus the symmetric KL divergence between
their predicted distributions.  The two halves' logits differ (different dropout masks), the KL
term is positive and every gradient is finite and nonzero.

Source: https://aitopics.org/doc/news:C5B77F1A ("In each training step, each data sample goes
through a model twice. Each pass is processed by a different sub-model which is sampled by
dropout"; "The final loss term is as the equation below, which combines the negative
log-likelihood loss(cross-entropy) L_NLL and the bidirectional KL divergence L_KL. The KL
divergence is measured on both sides: KL(P_1, P_2), KL(P_2, P_1) and the average is calculated").
Adapted: ``Linear(20, 64), GELU, Dropout(0.3), Linear(64, 64), GELU, Dropout(0.3), Linear(64,
5)``, the two passes as one concatenated batch (as the authors' code does), KL weight 1, Adam at
1e-3.
"""

import torch
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://aitopics.org/doc/news:C5B77F1A"
DESCRIPTION = "healthy: R-Drop, the batch concatenated with itself: two dropout masks, KL > 0"
ASK = []
MUST = [[HEALTHY_OK, r"R-?Drop", r"dropout", r"\bKL\b"]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    r"\bdead\b",
    r"all[- ]zero",
    r"^summary: (?!ok\b)[^\n]*(duplicat\w*|twice|same (input|batch|examples?))",
]


def data():
    g = torch.Generator().manual_seed(1)
    x = torch.randn(64, 20, generator=g)
    return x, (x[:, :5] + x[:, 5:10]).argmax(1)


def step(watch):
    torch.manual_seed(0)
    model = nn.Sequential(
        nn.Linear(20, 64),
        nn.GELU(),
        nn.Dropout(0.3),
        nn.Linear(64, 64),
        nn.GELU(),
        nn.Dropout(0.3),
        nn.Linear(64, 5),
    )
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    x, y = data()
    with watch(model) as w:
        optimizer.zero_grad()
        logits1, logits2 = model(torch.cat([x, x])).chunk(2)
        ce = 0.5 * (F.cross_entropy(logits1, y) + F.cross_entropy(logits2, y))
        lp1, lp2 = F.log_softmax(logits1, 1), F.log_softmax(logits2, 1)
        kl = 0.5 * (
            F.kl_div(lp1, lp2, log_target=True, reduction="batchmean")
            + F.kl_div(lp2, lp1, log_target=True, reduction="batchmean")
        )
        (ce + kl).backward()
        grads = {n: p.grad.detach().clone() for n, p in model.named_parameters()}
        optimizer.step()
    return Run(w=w, grads=grads, logits=(logits1.detach(), logits2.detach()), kl=kl.item())


def truth(run):
    a, b = run.logits
    assert not torch.allclose(a, b) and run.kl > 0
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
