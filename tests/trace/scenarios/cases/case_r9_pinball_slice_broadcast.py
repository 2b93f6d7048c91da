"""A network predicting three quantiles (0.1, 0.5, 0.9) trained with the pinball loss
``max(q e, (q - 1) e)``, ``e = y - prediction``, summed over the quantiles.  The loop takes each
quantile's column as ``pred[:, k:k+1]``, shape ``(N, 1)``, against the target ``y`` of shape
``(N,)``: ``e`` broadcasts to ``(N, N)``, every prediction is compared with every target, and each
head is trained toward the quantile of all targets of the batch instead of its own example's.

Source: https://jackmedley.com/post/quantile_regression ("The Pinball Loss ... also known as the
'check' function"; predicting several quantiles of ``logratio`` from ``range``).
"""

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn

SOURCE = "https://jackmedley.com/post/quantile_regression"
DESCRIPTION = "pinball loss, pred[:, k:k+1] (N, 1) against y (N,): e broadcasts to (N, N)"
ASK = []
MUST = [[r"broadcast", r"\(64, ?64\)", r"\(64, ?1\)"]]
MUST_NOT = [FALSE_OK, CLAIMS_NONFINITE]

QUANTILES = (0.1, 0.5, 0.9)


def pinball(e, q):
    return torch.maximum(q * e, (q - 1) * e).mean()


def step(watch, column: bool = True):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(1, 16), nn.ReLU(), nn.Linear(16, len(QUANTILES)))
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    g = torch.Generator().manual_seed(1)
    x = torch.rand(64, 1, generator=g) * 4 - 2
    y = torch.sin(2 * x[:, 0]) + (0.2 + 0.3 * x[:, 0].abs()) * torch.randn(64, generator=g)
    with watch(model) as w:
        optimizer.zero_grad()
        pred = model(x)
        shapes, loss = [], 0.0
        for k, q in enumerate(QUANTILES):
            e = y - (pred[:, k : k + 1] if column else pred[:, k])
            shapes.append(tuple(e.shape))
            loss = loss + pinball(e, q)
        loss.backward()
        optimizer.step()
    return Run(w=w, shapes=shapes, loss=loss.item())


def truth(run):
    assert run.shapes == [(64, 64)] * 3
