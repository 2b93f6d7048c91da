"""Random network distillation with its observation normalisation: the running mean and standard
deviation are initialised from a batch of a random agent's observations, and each observation fed
to the fixed random target and to the trained predictor is ``((s - mu) / sigma).clamp(-5, 5)``,
without an epsilon.  One observation feature never varies (a constant border cell of the grid, 0 in
every state), so its ``sigma`` is exactly 0 and its normalised value is ``0 / 0 = NaN``; ``clamp``
keeps NaN.  The target's and the predictor's outputs, the intrinsic rewards and the distillation
loss are NaN, and so is every gradient of the predictor; Adam's step writes NaN into it.  The target
is frozen and outside the optimizer, as it should be.

Source: https://www.emergentmind.com/topics/random-network-distillation-rnd ("RND computes intrinsic
rewards using the prediction error between a fixed, randomly initialized target network and a
trainable predictor network"; "It augments reinforcement learning by combining intrinsic rewards
with extrinsic signals, stabilizing learning through normalization and dual value head
architectures").  Adapted: 5 x 5 grid observations flattened to 25 features with the first always
0, target and predictor ``Linear(25, 64), LeakyReLU, Linear(64, 16)`` (the predictor with one more
hidden layer), statistics from 128 random observations, a batch of 32, Adam at 1e-4.
"""

import math

import torch
from scenario_kit import FALSE_OK, Run
from torch import nn

SOURCE = "https://www.emergentmind.com/topics/random-network-distillation-rnd"
DESCRIPTION = "RND obs normalisation (s - mu) / sigma without eps: a constant feature gives 0/0 NaN"
ASK = []
MUST = [
    [r"\bnan\b|non-?finite"],
    [
        r"\beps\w*",
        r"sigma|\bstd\b|standard deviation|variance",
        r"0 ?/ ?0|zero ?/ ?zero|divi\w* by zero",
        r"normali[sz]\w*",
        r"constant (feature|input|column)",
    ],
]
MUST_NOT = [FALSE_OK]


class RND(nn.Module):
    def __init__(self):
        super().__init__()
        self.target = nn.Sequential(nn.Linear(25, 64), nn.LeakyReLU(), nn.Linear(64, 16))
        self.predictor = nn.Sequential(
            nn.Linear(25, 64), nn.LeakyReLU(), nn.Linear(64, 64), nn.LeakyReLU(),
            nn.Linear(64, 16),
        )  # fmt: skip
        self.target.requires_grad_(False)


def observations(n, seed):
    g = torch.Generator().manual_seed(seed)
    grid = (torch.rand(n, 25, generator=g) < 0.3).float()
    grid[:, 0] = 0.0  # a border cell: never occupied
    return grid


def step(watch, eps=0.0):
    torch.manual_seed(0)
    model = RND()
    optimizer = torch.optim.Adam(model.predictor.parameters(), lr=1e-4)
    warmup = observations(128, 5)
    mu, sigma = warmup.mean(0), warmup.std(0)
    obs = observations(32, 6)
    with watch(model) as w:
        optimizer.zero_grad()
        x = ((obs - mu) / (sigma + eps)).clamp(-5, 5)
        target = model.target(x)
        prediction = model.predictor(x)
        error = (prediction - target).pow(2).sum(-1)
        intrinsic = error.detach()
        loss = error.mean()
        loss.backward()
        grads = {n: p.grad.detach().clone() for n, p in model.predictor.named_parameters()}
        optimizer.step()
    return Run(
        w=w, loss=float(loss.detach()), grads=grads, intrinsic=intrinsic, sigma=sigma,
        x=x, target_grads=[p.grad for p in model.target.parameters()],
        after=[p.detach().clone() for p in model.predictor.parameters()],
    )  # fmt: skip


def truth(run):
    assert float(run.sigma[0]) == 0.0 and bool((run.sigma[1:] > 0).all())
    assert bool(torch.isnan(run.x[:, 0]).all()) and bool(torch.isfinite(run.x[:, 1:]).all())
    assert math.isnan(run.loss) and bool(torch.isnan(run.intrinsic).all())
    for n, g in run.grads.items():
        assert bool(torch.isnan(g).any()), n
    assert all(g is None for g in run.target_grads)
    assert bool(torch.isnan(run.after[0]).any())
