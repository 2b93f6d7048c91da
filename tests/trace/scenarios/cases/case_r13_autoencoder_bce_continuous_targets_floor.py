"""A healthy step its author suspected: an autoencoder with a sigmoid output trained with binary
cross entropy on inputs drawn uniformly from [0, 1] (not binary).  The loss "never reaches zero"
because with a soft target p the binary cross entropy is minimised at the prediction p, where it
equals the target's entropy ``-p log p - (1 - p) log(1 - p)``, about 0.5 nats on average for
uniform targets: the loss has a floor well above 0 that a perfect reconstruction would sit on, and
its gradient is ``prediction - target`` (times the sigmoid's chain), zero at that floor.  The step
here, after 50 unwatched Adam steps, is an ordinary one: loss above the floor and falling,
every gradient finite and nonzero.  Nothing is wrong.

Source: https://stats.stackexchange.com/questions/441750/why-cant-this-autoencoder-reach-zero-loss
("I created a random array sample of shape (30000, 100) and fed it as input and output (x = y)
... So why doesn't it reach zero loss?"; the answer: "This autoencoder can't reach 0 loss because
there is a poor match between the inputs and the loss function").  Adapted: a one-hidden-layer
tanh autoencoder in PyTorch on 64 examples of 20 features.
"""

import torch
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = (
    "https://stats.stackexchange.com/questions/441750/why-cant-this-autoencoder-reach-zero-loss"
)
DESCRIPTION = "healthy: sigmoid + BCE on uniform [0, 1] targets: loss floor ~0.5, not a bug"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    r"saturat\w*",
    r"vanish\w*",
    r"all-zero",
    r"no gradient",
    r"dead (units?|relu|neurons?)",
]


def step(watch):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(20, 16), nn.Tanh(), nn.Linear(16, 20), nn.Sigmoid())
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    g = torch.Generator().manual_seed(1)
    x = torch.rand(64, 20, generator=g)
    losses = []
    for _ in range(50):  # earlier steps, unwatched
        opt.zero_grad()
        loss = F.binary_cross_entropy(model(x), x)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    with watch(model) as w:
        opt.zero_grad()
        loss = F.binary_cross_entropy(model(x), x)
        loss.backward()
        opt.step()
    floor = -(x * x.log() + (1 - x) * (1 - x).log()).mean().item()
    grads = {n: p.grad.detach().clone() for n, p in model.named_parameters()}
    return Run(w=w, loss=loss.item(), floor=floor, first=losses[0], grads=grads)


def truth(run):
    assert 0.45 < run.floor < 0.55  # the entropy of the targets: the best loss possible
    assert run.floor < run.loss < run.first  # above the floor, below where it started
    for n, gr in run.grads.items():
        assert bool(torch.isfinite(gr).all()) and bool(gr.abs().sum() > 0), n
