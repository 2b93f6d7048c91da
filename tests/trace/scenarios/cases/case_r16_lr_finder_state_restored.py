"""Control: the same LR range test (a tanh MLP regressor, Adam, one batch per rate from 1e-7
towards 10, stopped when the loss is ten times its best), with the model's and the optimizer's
states saved before the test and loaded back after it, as the fast.ai finder does.  Training at a
tenth of the stopping rate starts from the initial weights and an empty Adam state: the first
training batch's loss is the fresh model's.  Every gradient is finite and nonzero.

Source: https://docs.fast.ai/callbacks.lr_finder.html ("Train Learner over a few iterations. Start
with a very low start_lr and change it at each mini-batch until it reaches a very high end_lr";
"Pick a learning rate before it diverges then start training"; the learner trained after
``lr_find`` starts from its initial weights).  Adapted: the finder written by hand, the states
restored with ``state_dict`` / ``load_state_dict``.
"""

import math

import torch
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK, Run
from torch import nn

SOURCE = "https://docs.fast.ai/callbacks.lr_finder.html"
DESCRIPTION = "control: LR range test with model and optimizer states saved and restored"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    r"explod\w*|diverg\w*",
    r"(huge|very large) (weights?|parameters?|loss)",
    r"no gradient",
    r"all-zero",
]


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
    saved_model = {k: v.clone() for k, v in model.state_dict().items()}
    saved_opt = optimizer.state_dict()
    stop_lr = range_test(model, optimizer, X, y)
    model.load_state_dict(saved_model)
    optimizer.load_state_dict(saved_opt)
    for group in optimizer.param_groups:
        group["lr"] = stop_lr / 10
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
            assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0)
    for s, i in zip(run.start, run.init, strict=True):
        assert torch.equal(s, i)  # training starts from the initial weights
    assert set(run.steps_before) == {0}  # and an empty Adam state
    assert abs(run.losses[0] - run.fresh_loss) < 1e-6
