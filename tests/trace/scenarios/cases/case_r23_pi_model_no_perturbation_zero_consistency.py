"""A Pi-model semi-supervised step whose two passes over the unlabelled batch see no noise: the
network has no dropout and the augmentation is applied to the labelled batch only, so the two
predictions on each unlabelled example are bit-identical.  The consistency loss is exactly 0 and
contributes exactly nothing to the gradient: the step is the supervised step on 16 labelled
examples, and the 64 unlabelled ones are never used, whatever the ramp-up weight.  Nothing
raises; nothing is NaN.

Source: https://www.lephongphu.me/ai-expert-roadmap/cv-computer-vision/04_semi-supervised-learning/02_consistency-regularization
("This paradigm uses the idea that model predictions on an unlabeled image should remain the same
even after adding noise. We could use input noise such as Image Augmentation and Gaussian noise.
Noise can also be incorporated into the architecture itself using Dropout.").  Adapted: a
``Linear(10, 32)``, ``Tanh``, ``Linear(32, 3)`` classifier, Gaussian noise of 0.1 as the
augmentation (on the labelled batch only), squared error between the two softmaxes, the sigmoid
ramp-up weight ``exp(-5 (1 - t)^2)`` at ``t = 0.5``, SGD at 0.1.
"""

import copy
import math

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = (
    "https://www.lephongphu.me/ai-expert-roadmap/cv-computer-vision/04_semi-supervised-learning/"
    "02_consistency-regularization"
)
DESCRIPTION = "Pi-model without noise or dropout on the unlabelled passes: consistency exactly 0"
ASK = []
MUST = [
    [
        r"consisten\w*",
        r"unlabel\w*",
        r"pi[- ]model",
        r"second (pass|forward)",
        r"two (passes|forwards)",
    ],
    [
        r"(no|without) (noise|augmentation|perturbation|dropout)",
        r"identical",
        r"(exactly|identically) (0|zero)",
        r"(loss|term) (is |was )?(0|zero)\b",
        r"contribut\w* nothing",
    ],
]
MUST_NOT = [FALSE_OK, CLAIMS_NONFINITE]
WEIGHT = math.exp(-5 * (1 - 0.5) ** 2)  # sigmoid ramp-up, halfway


def data():
    g = torch.Generator().manual_seed(1)
    x_l = torch.randn(16, 10, generator=g)
    x_u = torch.randn(64, 10, generator=g)
    return x_l, x_l[:, :3].argmax(1), x_u


def noise(x):
    return x + 0.1 * torch.randn_like(x)


def build(perturbed):
    layers = [nn.Linear(10, 32), nn.Tanh()]
    if perturbed:
        layers.append(nn.Dropout(0.2))
    return nn.Sequential(*layers, nn.Linear(32, 3))


def losses(model, perturbed):
    x_l, y_l, x_u = data()
    aug = noise if perturbed else (lambda x: x)
    supervised = F.cross_entropy(model(noise(x_l)), y_l)
    p1 = F.softmax(model(aug(x_u)), dim=1)
    p2 = F.softmax(model(aug(x_u)), dim=1)
    return supervised, p1, p2, F.mse_loss(p1, p2)


def step(watch, perturbed=False):
    torch.manual_seed(0)
    model = build(perturbed)
    model.train()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    state, rng = copy.deepcopy(model.state_dict()), torch.get_rng_state()
    with watch(model) as w:
        optimizer.zero_grad()
        supervised, p1, p2, consistency = losses(model, perturbed)
        (supervised + WEIGHT * consistency).backward()
        grads = [p.grad.detach().clone() for p in model.parameters()]
        optimizer.step()
    replay = build(perturbed)  # the same step replayed, for the consistency term's own gradient
    replay.load_state_dict(state)
    torch.set_rng_state(rng)
    cons = losses(replay, perturbed)[3]
    cons_grads = torch.autograd.grad(cons, list(replay.parameters()))
    return Run(w=w, p1=p1.detach(), p2=p2.detach(), consistency=consistency.item(), grads=grads,
               cons_grads=cons_grads, replayed=cons.item())  # fmt: skip


def truth(run):
    assert torch.equal(run.p1, run.p2) and run.consistency == 0.0 == run.replayed
    for g in run.cons_grads:
        assert bool((g == 0).all())  # the unlabelled term gives nothing
    for g in run.grads:
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0)  # the supervised part
