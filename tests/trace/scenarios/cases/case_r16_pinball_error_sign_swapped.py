"""A 0.9-quantile regressor whose pinball loss takes the error the other way round, ``e = y_pred -
y_true``, in ``max(q * e, (q - 1) * e)``.  With the sign swapped, under-predictions cost ``1 - q``
and over-predictions ``q``: the loss is the pinball loss of the 0.1 quantile, its gradient with
respect to the predictions is exactly that of ``q = 0.1``, and after 300 Adam steps only about one
target in ten lies below the prediction (a 0.9 quantile should have nine in ten).  Every gradient is
finite and nonzero; nothing raises.

Source: https://www.mohdvasim.com/blog/deep-learning/04-loss-functions/06-quantile-loss ("L_q(y, ŷ) =
q · max(y − ŷ, 0) + (1 − q) · max(ŷ − y, 0)"; "Note: error here is y_true − y_pred. Positive =
underprediction (we guessed too low). Negative = overprediction").  Adapted: a tanh MLP on
heteroscedastic 1-D data, 300 unwatched Adam steps, then two watched ones.
"""

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn

SOURCE = "https://www.mohdvasim.com/blog/deep-learning/04-loss-functions/06-quantile-loss"
DESCRIPTION = "pinball loss with e = y_pred - y_true at q = 0.9: trains the 0.1 quantile"
ASK = []
MUST = [
    [
        r"\bsign\b",
        r"(swapped|reversed|flipped|inverted|wrong way round)",
        r"1 ?- ?q\b|0\.1[- ]quantile|10(th)? ?(%|percent|percentile)",
        r"y_pred ?- ?y_true|pred\w* minus (the )?(target|true)",
    ],
]
MUST_NOT = [FALSE_OK, CLAIMS_NONFINITE, r"dead (units?|relu|neurons?)", r"no_grad"]
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
        e = pred - y  # y_pred - y_true
        return torch.maximum(Q * e, (Q - 1) * e).mean()

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
    as_low = torch.autograd.grad(pinball(pred, run.y, 1 - Q), pred)[0]
    assert torch.allclose(used, as_low)  # the 0.1 quantile's gradient
    below = float((run.y <= run.preds[0]).float().mean())
    assert below < 0.25  # about one target in ten under the "0.9 quantile"
