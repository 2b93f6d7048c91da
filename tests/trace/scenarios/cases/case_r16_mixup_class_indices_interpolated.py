"""Mixup written on integer class indices instead of one-hot targets: the inputs are mixed as
``lam * x + (1 - lam) * x[perm]`` and so are the labels, ``(lam * y + (1 - lam) * y[perm]).long()``,
then ``CrossEntropyLoss`` with those indices.  Averaging two class indices gives a third index
(classes 2 and 7 mixed 0.3 / 0.7 give 5.5, truncated to class 5): for most mixed examples the
target is neither of the two classes that were mixed, and the loss trains the model towards
classes that are not in the image.  Every gradient is finite and nonzero; nothing raises.

Source: https://iquanku.com/read/th-fastai-book/spilt.5.798d5ac22392691a.md (fastai book, Mixup:
"For this to work, our targets need to be one-hot encoded"; "suppose we have 10 classes and 'church'
is represented by the index 2 and 'gas station' is reprsented by the index 7").  Adapted: a tanh MLP
on 10 synthetic classes, ``lam`` drawn from Beta(0.4, 0.4); the same setup done right (mixing the
two losses, or one-hot targets) is round 8's ``r8_mixup_two_label_loss``.
"""

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://iquanku.com/read/th-fastai-book/spilt.5.798d5ac22392691a.md"
DESCRIPTION = "mixup averaging integer class indices: targets become a third class"
ASK = []
MUST = [
    [
        r"one-?hot",
        r"(class )?ind(ex|ices)[^\n]{0,40}(interpolat|mix|averag|blend)\w*",
        r"(interpolat|mix|averag|blend)\w*[^\n]{0,40}(class )?(ind(ex|ices)|integer labels?)",
        r"neither",
        r"(third|another|wrong|different|unrelated) class",
    ],
]
MUST_NOT = [FALSE_OK, CLAIMS_NONFINITE, r"dead (units?|relu|neurons?)", r"no_grad"]
CLASSES = 10


def data():
    g = torch.Generator().manual_seed(1)
    centers = 2.0 * torch.randn(CLASSES, 16, generator=g)
    y = torch.randint(0, CLASSES, (64,), generator=g)
    x = centers[y] + torch.randn(64, 16, generator=g)
    perm = torch.randperm(64, generator=g)
    return x, y, perm


def step(watch):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(16, 64), nn.Tanh(), nn.Linear(64, CLASSES))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    x, y, perm = data()
    lam = float(torch.distributions.Beta(0.4, 0.4).sample())
    lam = min(max(lam, 0.2), 0.8)  # a clearly mixed batch
    with watch(model) as w:
        optimizer.zero_grad()
        mixed_x = lam * x + (1 - lam) * x[perm]
        mixed_y = (lam * y + (1 - lam) * y[perm]).long()
        pred = model(mixed_x)
        loss = F.cross_entropy(pred, mixed_y)
        loss.backward()
        grads = {n: p.grad.detach().clone() for n, p in model.named_parameters()}
        optimizer.step()
    return Run(w=w, lam=lam, y_a=y, y_b=y[perm], mixed_y=mixed_y, pred=pred.detach(), grads=grads)


def truth(run):
    assert 0.2 <= run.lam <= 0.8
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
    neither = (run.mixed_y != run.y_a) & (run.mixed_y != run.y_b)
    assert float(neither.float().mean()) > 0.4  # most targets are a third class
    # the loss the batch should have had: lam * CE(y_a) + (1 - lam) * CE(y_b)
    pred = run.pred.clone().requires_grad_(True)
    right = run.lam * F.cross_entropy(pred, run.y_a) + (1 - run.lam) * F.cross_entropy(
        pred, run.y_b
    )
    used = F.cross_entropy(pred, run.mixed_y)
    g_right = torch.autograd.grad(right, pred)[0]
    g_used = torch.autograd.grad(used, pred)[0]
    assert float((g_right - g_used).norm()) > 0.5 * float(g_right.norm())
