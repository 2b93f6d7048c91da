"""An LR range test run on the model that is then trained, with nothing restored afterwards.  The
test trains the real model and its Adam optimizer one batch per learning rate, the rate growing
exponentially from 1e-7 towards 10, and stops once the loss is ten times its best: by then the
weights have taken the steps of the largest rates (each of the six tensors moved more than its
own norm from the initialisation) and Adam carries the test's moments and a step count of 84.
Training at the chosen rate then starts from that state: the first training batch's loss is nearly
twice that of the freshly initialised model on the same batch (1.40 against 0.75).  Every gradient
is finite; nothing raises.

Source: https://ttsugriy.github.io/llm-first-principles/stages/stage-08/04-learning-rate-finding
("Start with a very small LR (10⁻⁷) / Train for one batch / Increase LR exponentially / Record loss
at each LR / Stop when loss explodes"; its ``LearningRateFinder.range_test(train_fn)`` with
``train_fn`` "Takes LR, does one step, returns loss" and ``if np.isnan(loss) or loss > 10 *
best_loss: break``; "Rule of thumb: Choose a LR about 10x smaller than where explosion begins").
Adapted: a tanh MLP regressor (8-32-32-1) with Adam, 100 rates from 1e-7 to 10; the training rate is
a tenth of the rate at which the test stopped; two training iterations are watched.
"""

import math

import torch
from scenario_kit import FALSE_OK, Run
from torch import nn

SOURCE = "https://ttsugriy.github.io/llm-first-principles/stages/stage-08/04-learning-rate-finding"
DESCRIPTION = "LR range test trains the real model + Adam, nothing restored: training starts there"
ASK = []
MUST = [
    [
        r"(range test|lr.?finder|learning.?rate finder|lr sweep|learning.?rate sweep)",
        r"(not|never|without being) (restored|reset|reloaded)",
        r"(initial|original|saved|starting|fresh) (weights|state|parameters|model)",
        r"state_dict",
        r"optimi[sz]er(['’]s)? state[^\n]{0,60}(step|moments?|carried|left|already|non-?empty)",
        r"\bstep(s| count| counter)?[^\n]{0,20}\b8[45]\b",
        r"(weights?|parameters?)[^\n]{0,60}(huge|very large|diverged|blown|exploded|far from)",
    ],
]
MUST_NOT = [FALSE_OK, r"\bnan\b|non-?finite"]


def make_model():
    torch.manual_seed(0)
    return nn.Sequential(
        nn.Linear(8, 32), nn.Tanh(), nn.Linear(32, 32), nn.Tanh(), nn.Linear(32, 1)
    )


def data():
    g = torch.Generator().manual_seed(1)
    X = torch.randn(256, 8, generator=g)
    y = X[:, :1] * 0.8 - X[:, 1:2] * 0.5 + 0.1 * torch.randn(256, 1, generator=g)
    return X, y


def batch(X, y, i):
    s = (i * 32) % 256
    return X[s : s + 32], y[s : s + 32]


def range_test(model, optimizer, X, y):
    """The page's range test: one step per rate, stop when the loss explodes.  Returns the rate
    at which it stopped."""
    loss_fn = nn.MSELoss()

    def train_fn(lr, i):
        for group in optimizer.param_groups:
            group["lr"] = lr
        xb, yb = batch(X, y, i)
        optimizer.zero_grad()
        loss = loss_fn(model(xb), yb)
        loss.backward()
        optimizer.step()
        return loss.item()

    lrs = torch.exp(torch.linspace(math.log(1e-7), math.log(10.0), 100)).tolist()
    best = float("inf")
    for i, lr in enumerate(lrs):
        loss = train_fn(lr, i)
        if math.isnan(loss) or loss > 10 * best:
            return lr
        best = min(best, loss)
    return lrs[-1]


def step(watch):
    model = make_model()
    X, y = data()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-7)
    init = [p.detach().clone() for p in model.parameters()]
    stop_lr = range_test(model, optimizer, X, y)  # nothing saved before, nothing loaded after
    train_lr = stop_lr / 10
    for group in optimizer.param_groups:
        group["lr"] = train_lr
    start = [p.detach().clone() for p in model.parameters()]
    steps_before = [
        int(optimizer.state[p]["step"]) if p in optimizer.state else 0 for p in model.parameters()
    ]
    loss_fn = nn.MSELoss()
    losses, grads = [], []
    with watch(model) as w:
        for i in range(2):
            xb, yb = batch(X, y, i)
            optimizer.zero_grad()
            loss = loss_fn(model(xb), yb)
            loss.backward()
            grads.append([p.grad.detach().clone() for p in model.parameters()])
            optimizer.step()
            losses.append(loss.item())
    fresh = make_model()
    xb, yb = batch(X, y, 0)
    with torch.no_grad():
        fresh_loss = loss_fn(fresh(xb), yb).item()
    return Run(
        w=w,
        init=init,
        start=start,
        steps_before=steps_before,
        losses=losses,
        grads=grads,
        fresh_loss=fresh_loss,
        stop_lr=stop_lr,
    )


def truth(run):
    for gs in run.grads:
        for g in gs:
            assert bool(torch.isfinite(g).all())
    assert 0.1 < run.stop_lr < 10
    moved = [float((s - i).norm() / i.norm()) for s, i in zip(run.start, run.init, strict=True)]
    assert all(m > 1.0 for m in moved)  # each tensor moved further than its own norm
    assert set(run.steps_before) == {84}  # Adam's moments and step count from the test
    assert run.losses[0] > 1.5 * run.fresh_loss
