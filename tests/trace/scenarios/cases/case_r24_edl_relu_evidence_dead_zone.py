"""An evidential classifier whose non-negative evidence is ``relu(logits)``, with Dirichlet
parameters ``alpha = evidence + 1`` and the type-II maximum-likelihood loss ``sum_k y_k (log S -
log alpha_k)``.  Wherever a logit is negative the evidence is 0 and the ReLU passes back no
gradient: about half of all logits, at initialisation, get an exactly zero gradient, including
the true class's logit of a large share of the examples, which can therefore never gain
evidence for their class from this loss (the "dead zone" of evidential learning).  Parameter
gradients are finite and nonzero (the other logits carry them); nothing raises.

Source: https://www.emergentmind.com/topics/evidential-deep-learning-edl-loss ("the neural network
predicts a non-negative 'evidence' vector e(x) ... The evidence is mapped to Dirichlet
concentration parameters: alpha_k(x) = e_k(x) + 1"; "Advanced variants address issues like dead
zones, class imbalance, and OOD detection").  Adapted: the evidence activation ReLU, a
``Linear(10, 32)``, ``Tanh``, ``Linear(32, 4)`` network, 128 examples of 4 classes, the loss
without its KL regulariser (annealed from 0 at the first step), Adam at 1e-3.
"""

import copy

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://www.emergentmind.com/topics/evidential-deep-learning-edl-loss"
DESCRIPTION = "evidential loss with relu(logits) evidence: negative logits get no gradient"
ASK = []
MUST = [
    [r"relu", r"evidence"],
    [
        r"\bzero\b",
        r"no gradient",
        r"dead",
        r"negative (logits|outputs|inputs|values)",
        r"softplus",
        r"\bexp\b",
    ],
]
MUST_NOT = [FALSE_OK, CLAIMS_NONFINITE]


def edl_loss(logits, y, activation):
    alpha = activation(logits) + 1.0
    strength = alpha.sum(1, keepdim=True)
    return (F.one_hot(y, 4) * (strength.log() - alpha.log())).sum(1).mean()


def data():
    g = torch.Generator().manual_seed(1)
    x = torch.randn(128, 10, generator=g)
    return x, (x[:, :4] + 0.5 * x[:, 4:8]).argmax(1)


def step(watch, activation=F.relu):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(10, 32), nn.Tanh(), nn.Linear(32, 4))
    start = copy.deepcopy(model)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    x, y = data()
    with watch(model) as w:
        optimizer.zero_grad()
        loss = edl_loss(model(x), y, activation)
        loss.backward()
        grads = {n: p.grad.detach().clone() for n, p in model.named_parameters()}
        optimizer.step()
    logits = start(x)
    logit_grad = torch.autograd.grad(edl_loss(logits, y, activation), logits)[0]
    return Run(w=w, grads=grads, logits=logits.detach(), logit_grad=logit_grad, y=y)


def truth(run):
    negative = run.logits < 0
    assert bool((run.logit_grad[negative] == 0).all())  # the ReLU's dead zone
    assert float(negative.float().mean()) > 0.25
    true_logit = run.logits.gather(1, run.y.view(-1, 1)).squeeze(1)
    assert float((true_logit < 0).float().mean()) > 0.1  # their own class gets nothing
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
