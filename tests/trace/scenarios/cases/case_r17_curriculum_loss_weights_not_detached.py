"""Loss-based curriculum weighting with the weights left in the graph. Each example's weight is
``w_i = exp(-l_i / tau)`` (easy examples, low loss, weigh more; hard ones are down-weighted), taken
from the per-example cross-entropy ``l_i`` without ``detach``, and the loss is ``mean(w_i * l_i)``.
Backpropagation then also differentiates the weights: the coefficient of ``grad l_i`` is ``w_i (1 -
l_i / tau) / n``, negative for every example whose loss is above ``tau``, so the step raises the
loss of the hard examples instead of merely down-weighting them (here 38 of 64 examples). Every
gradient is finite and nonzero; nothing raises.

Source:
https://europe.naverlabs.com/blog/superloss-robust-curriculum-learning-helps-machines-to-learn-like-humans/
("the losses—i.e. the prediction error—of samples during training can be used to identify which ones
are difficult, as they usually show a high loss across training compared to easy samples. To
effectively apply curriculum learning, the importance of the difficult samples is lessened while
training by reducing the weight of their contribution (downweighting)"). Adapted: a tanh MLP
classifier on 3 synthetic classes, ``tau = 1``, SGD; the weights computed from the live loss.
"""

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = (
    "https://europe.naverlabs.com/blog/"
    "superloss-robust-curriculum-learning-helps-machines-to-learn-like-humans/"
)
DESCRIPTION = "curriculum weights exp(-loss/tau) not detached: hard examples' loss ascended"
ASK = []
MUST = [
    [
        r"detach\w*",
        r"weights?[^\n]{0,60}(graph|gradient|differentiat\w*|requires_grad)",
        r"(gradient|backprop\w*)[^\n]{0,60}(through|into) (the )?(per-?(example|sample) )?weights?",
        r"ascen\w*|increase[^\n]{0,30}loss|wrong sign|negative (coefficient|weight)",
    ],
]
MUST_NOT = [FALSE_OK, CLAIMS_NONFINITE]
TAU = 1.0


def data():
    g = torch.Generator().manual_seed(1)
    x = torch.randn(64, 10, generator=g)
    y = (x[:, :3].argmax(1) + (torch.rand(64, generator=g) < 0.2).long()) % 3
    return x, y


def make_model():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(10, 32), nn.Tanh(), nn.Linear(32, 3))


def step(watch):
    model = make_model()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = data()
    with watch(model) as w:
        optimizer.zero_grad()
        per_example = F.cross_entropy(model(x), y, reduction="none")
        weights = torch.exp(-per_example / TAU)  # from the live loss, not detached
        loss = (weights * per_example).mean()
        loss.backward()
        grads = [p.grad.detach().clone() for p in model.parameters()]
        optimizer.step()
    return Run(w=w, per_example=per_example.detach(), grads=grads, x=x, y=y)


def coefficients(per_example):
    """d loss / d l_i when the weights exp(-l_i / tau) are differentiated too."""
    return torch.exp(-per_example / TAU) * (1 - per_example / TAU) / len(per_example)


def truth(run):
    live = coefficients(run.per_example)
    model = make_model()
    per_example = F.cross_entropy(model(run.x), run.y, reduction="none")
    expect = torch.autograd.grad((live * per_example).sum(), list(model.parameters()))
    for g, e in zip(run.grads, expect, strict=True):
        assert torch.allclose(g, e, atol=1e-6)  # the weights were differentiated
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0)
    hard = run.per_example > TAU
    assert int(hard.sum()) >= 10
    assert bool((live[hard] < 0).all())  # gradient ascent on the hard examples' loss
