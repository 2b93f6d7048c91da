"""Control: the same 0.9-quantile regressor and data with the pinball loss written with ``e =
y_true - y_pred``: under-predictions cost ``q = 0.9`` per unit and over-predictions ``0.1``.  After
the same 300 Adam steps about nine targets in ten lie below the prediction, and the gradient with
respect to the predictions is ``-q / N`` or ``(1 - q) / N`` per example.  Every gradient is finite
and nonzero.

Source: https://seanslma.github.io/maki/ML/Quantile/PinballLoss ("assume quantile = 0.1 and
y_true = 100 ... if y_pred = 97 (y_pred < y_true, underpredict): loss = 0.1 * (100 - 97) ... if
y_pred = 103 (overpredict): loss = (1 - 0.1) * (103 - 100)"; "expect the model to underpredict 90%
of the time").  Adapted: q = 0.9, the page's convention, on a tanh MLP.
"""

import torch
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK, Run
from torch import nn

SOURCE = "https://seanslma.github.io/maki/ML/Quantile/PinballLoss"
DESCRIPTION = "control: pinball loss with e = y_true - y_pred at q = 0.9"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    r"\bsign\b[^\n]{0,30}(swapped|reversed|flipped|wrong)",
    r"no gradient",
    r"all-zero",
]
Q = 0.9


def pinball(pred, y, q):
    e = y - pred
    return torch.maximum(q * e, (q - 1) * e).mean()


def data():
    g = torch.Generator().manual_seed(1)
    x = 4.0 * torch.rand(256, 1, generator=g) - 2.0
    y = torch.sin(x) + (0.2 + 0.3 * x.abs()) * torch.randn(256, 1, generator=g)
    return x, y


def step(watch):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(1, 32), nn.Tanh(), nn.Linear(32, 1))
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    x, y = data()

    def loss_fn(pred):
        return pinball(pred, y, Q)

    for _ in range(300):
        optimizer.zero_grad()
        loss_fn(model(x)).backward()
        optimizer.step()
    preds, grads = [], []
    with watch(model) as w:
        for _ in range(2):
            optimizer.zero_grad()
            pred = model(x)
            loss = loss_fn(pred)
            loss.backward()
            preds.append(pred.detach())
            grads.append([p.grad.detach().clone() for p in model.parameters()])
            optimizer.step()
    return Run(w=w, x=x, y=y, preds=preds, grads=grads, loss_fn=loss_fn)


def truth(run):
    for gs in run.grads:
        for g in gs:
            assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0)
    pred = run.preds[0].clone().requires_grad_(True)
    used = torch.autograd.grad(run.loss_fn(pred), pred)[0]
    assert torch.allclose(used, torch.autograd.grad(pinball(pred, run.y, Q), pred)[0])
    below = float((run.y <= run.preds[0]).float().mean())
    assert below > 0.75  # about nine targets in ten under the 0.9 quantile
