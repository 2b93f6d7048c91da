"""A model EMA whose ``update()`` averages ``named_parameters()`` only, for a model with
``BatchNorm1d``: the shadow copy's ``running_mean``, ``running_var`` and ``num_batches_tracked``
are buffers, not parameters, and stay at their initial values (0, 1, 0) however long the model
trains, while the model's own move with every training batch.  Evaluated in ``eval()`` mode, the
EMA model normalises with mean 0 and variance 1 features whose mean here is far from 0.  The
training steps themselves are ordinary: every gradient of the model is finite and nonzero.

Source: http://www.zijianhu.com/post/pytorch/ema/ ("Notice that when applying EMA, only the
trainable parameters should be changed"; "Since my implementation creates a copy of the input
model (i.e. shadow), the buffers needs to be copied to shadow whenever update() is invoked").
Adapted: ``Linear(10, 32), BatchNorm1d(32), Tanh, Linear(32, 1)`` regressing on features with mean
3, two training steps of 64 examples with Adam at 1e-3, an EMA with decay 0.9 updated after each.
"""

import copy

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "http://www.zijianhu.com/post/pytorch/ema/"
DESCRIPTION = "EMA update over named_parameters only: the shadow's BatchNorm buffers never move"
ASK = []
MUST = [
    [r"buffers?", r"running_(mean|var)", r"running (statistics|stats|mean|var\w*)", r"batch ?norm"],
    [r"\bEMA\b", r"shadow", r"moving average", r"averaged (model|copy)"],
]
MUST_NOT = [
    FALSE_OK,
    CLAIMS_NONFINITE,
    r"\bdead\b",
    r"requires_grad\s*(=|is|was)?\s*False",
    r"not in (the |any )?optimi[sz]er",
]
DECAY = 0.9


def update_parameters_only(ema, model):
    with torch.no_grad():
        params = dict(model.named_parameters())
        for name, p in ema.named_parameters():
            p.mul_(DECAY).add_(params[name], alpha=1 - DECAY)


def data():
    g = torch.Generator().manual_seed(1)
    x = torch.randn(128, 10, generator=g) + 3.0
    return x, (x - 3.0).sum(1, keepdim=True) / 3


def step(watch, update=update_parameters_only):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(10, 32), nn.BatchNorm1d(32), nn.Tanh(), nn.Linear(32, 1))
    ema = copy.deepcopy(model).requires_grad_(False)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    x, y = data()
    grads = []
    with watch(model) as w:
        for i in range(2):
            optimizer.zero_grad()
            F.mse_loss(model(x[64 * i : 64 * (i + 1)]), y[64 * i : 64 * (i + 1)]).backward()
            grads.append({n: p.grad.detach().clone() for n, p in model.named_parameters()})
            optimizer.step()
            update(ema, model)
    return Run(w=w, model=model, ema=ema, grads=grads)


def _training_was_ordinary(run):
    for grads in run.grads:
        for n, g in grads.items():
            assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
    assert int(run.model[1].num_batches_tracked) == 2
    assert float(run.model[1].running_mean.abs().max()) > 0.05


def truth(run):
    _training_was_ordinary(run)
    bn = run.ema[1]
    assert bool((bn.running_mean == 0).all()) and bool((bn.running_var == 1).all())
    assert int(bn.num_batches_tracked) == 0
