"""A binary classifier on imbalanced tabular data (about 17 % positives), three 8-unit ReLU layers
and a sigmoid output, trained on raw features whose scales run from 1 to 500.  Two epochs of Adam at
a high rate push every unit of the first ReLU layer below zero for every example: the layer is dead,
the layers after it receive a constant input, and the network outputs the same probability for
every example (0.17, the positive rate): "only learned the bias".  In the watched step the first
layer's weights and biases and the second layer's weights get exactly zero gradient; the loss is
finite.  Nothing raises.

Source: https://datascience.stackexchange.com/questions/19283/why-mlp-only-learns-bias-for-unbalanced-binary-classification
("I'm using three 8-sized dense layers each following a ReLU layer, finally a sigmoid since it's
binary classification. However, the training process converged after only 2 epochs and basically
only learned the bias term and and ended up predicting everything to be negative").  Adapted: 20
synthetic features (not standardised), 512 examples, Adam at lr 0.1, 16 unwatched batches of 64,
then one watched step.
"""

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = (
    "https://datascience.stackexchange.com/questions/19283/"
    "why-mlp-only-learns-bias-for-unbalanced-binary-classification"
)
DESCRIPTION = "imbalanced binary ReLU MLP on raw features: first ReLU layer dead, constant output"
ASK = ["0.weight"]
MUST = [
    [
        r"dead",
        r"(never|not) activ\w*|inactive",
        r"(zero|no) (activation|output)s?",
        r"relu[^\n]{0,40}(zero|negative|off)",
    ],
]
MUST_NOT = [FALSE_OK, CLAIMS_NONFINITE, r"not in (the |any )?optimizer", r"no_grad"]


def data():
    g = torch.Generator().manual_seed(1)
    scales = torch.logspace(0, torch.log10(torch.tensor(500.0)).item(), 20)
    x = torch.rand(512, 20, generator=g) * scales  # raw, not standardised
    logit = (x / scales - 0.5) @ torch.randn(20, generator=g) * 2 - 2.6
    y = (torch.rand(512, generator=g) < torch.sigmoid(logit)).float()
    return x, y


def step(watch):
    torch.manual_seed(1)
    model = nn.Sequential(
        nn.Linear(20, 8),
        nn.ReLU(),
        nn.Linear(8, 8),
        nn.ReLU(),
        nn.Linear(8, 8),
        nn.ReLU(),
        nn.Linear(8, 1),
    )
    optimizer = torch.optim.Adam(model.parameters(), lr=0.1)
    x, y = data()
    for i in range(16):  # two epochs of 8 batches
        xb, yb = x[(i * 64) % 512 :][:64], y[(i * 64) % 512 :][:64]
        optimizer.zero_grad()
        F.binary_cross_entropy_with_logits(model(xb).squeeze(1), yb).backward()
        optimizer.step()
    xb, yb = x[:64], y[:64]
    with watch(model) as w:
        optimizer.zero_grad()
        loss = F.binary_cross_entropy_with_logits(model(xb).squeeze(1), yb)
        loss.backward()
        grads = {n: p.grad.detach().clone() for n, p in model.named_parameters()}
        optimizer.step()
    with torch.no_grad():
        h1 = model[1](model[0](x))
        prob = torch.sigmoid(model(x)).squeeze(1)
    return Run(w=w, loss=loss.item(), grads=grads, h1=h1, prob=prob, rate=float(y.mean()))


def truth(run):
    assert torch.isfinite(torch.tensor(run.loss))
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()), n
    assert bool((run.h1 == 0).all())  # every unit of the first ReLU layer, every example
    for n in ("0.weight", "0.bias", "2.weight"):
        assert bool((run.grads[n] == 0).all()), n
    assert float(run.prob.std()) < 1e-6  # one probability for every example
    assert abs(float(run.prob[0]) - run.rate) < 0.05
    assert 0.1 < run.rate < 0.25
