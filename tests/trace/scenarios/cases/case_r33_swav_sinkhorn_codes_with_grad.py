"""A SwAV step: two augmented views through an encoder, their normalised embeddings scored against
normalised prototypes, codes ``q`` from the scores by three Sinkhorn-Knopp iterations (``exp(scores
/ 0.05)``, rows and columns rescaled in turn), and the swapped prediction loss ``-sum q_t * log
softmax(scores_s / 0.1)``.  SwAV computes the codes under ``torch.no_grad()``: they are targets.
Here the Sinkhorn function runs with autograd on, so the loss also back-propagates through the
codes, through ``exp(scores / 0.05)`` and every normalisation, into the encoder and the prototypes:
a gradient that makes the targets move toward the predictions, between 0.1 and 0.8 times the
swapped prediction's own gradient in each tensor here.  Nothing raises; every gradient is finite and nonzero.

Source: https://ainews.one/understanding-swav-self-supervised-learning-with-contrasting-cluster-assignments/
("SWAV compares the features z_t"; "In SwAV, there is the intermediate "codes" step (Q). To create
the codes (targets), we need to assign the image features to prototype vectors. We then solve a
"swapped" prediction problem wherein the codes (targets) are altered for the two image views";
"the optimal transport problem with entropy constraint and its fast approximation that is a key
point of the SWAV method").  Adapted: 32 inputs of width 16, two noisy views, an encoder
``Linear(16, 64), ReLU, Linear(64, 32)``, 10 prototypes (``Linear(32, 10, bias=False)``, rows
renormalised under ``no_grad`` before the step as SwAV does), SGD at 0.05.
"""

import copy
import math

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = (
    "https://ainews.one/understanding-swav-self-supervised-learning-with-contrasting-cluster-"
    "assignments/"
)
DESCRIPTION = "SwAV Sinkhorn codes computed with autograd on: the loss back-propagates into targets"
ASK = []
MUST = [
    [r"no_grad", r"detach\w*", r"stop[- ]?grad\w*"],
    [r"sinkhorn", r"codes?", r"targets?", r"assignments?", r"\bq\b"],
]
MUST_NOT = [FALSE_OK, CLAIMS_NONFINITE, r"\bdead\b"]
EPS, TEMP, ITERS = 0.05, 0.1, 3


class SwAV(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(16, 64), nn.ReLU(), nn.Linear(64, 32))
        self.prototypes = nn.Linear(32, 10, bias=False)

    def forward(self, x):
        return self.prototypes(F.normalize(self.encoder(x), dim=1))


def sinkhorn(scores):
    q = torch.exp(scores / EPS).t()
    q = q / q.sum()
    k, b = q.shape
    for _ in range(ITERS):
        q = q / q.sum(1, keepdim=True) / k
        q = q / q.sum(0, keepdim=True) / b
    return (q * b).t()


def swav_loss(model, v1, v2, codes_grad):
    s1, s2 = model(v1), model(v2)
    if codes_grad:
        q1, q2 = sinkhorn(s1), sinkhorn(s2)
    else:
        with torch.no_grad():
            q1, q2 = sinkhorn(s1), sinkhorn(s2)
    p1, p2 = F.log_softmax(s1 / TEMP, 1), F.log_softmax(s2 / TEMP, 1)
    return -((q1 * p2).sum(1).mean() + (q2 * p1).sum(1).mean()) / 2, q1


def step(watch, codes_grad=True):
    torch.manual_seed(0)
    model = SwAV()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    g = torch.Generator().manual_seed(11)
    x = torch.randn(32, 16, generator=g)
    v1 = x + 0.1 * torch.randn(32, 16, generator=g)
    v2 = x + 0.1 * torch.randn(32, 16, generator=g)
    with torch.no_grad():
        model.prototypes.weight.copy_(F.normalize(model.prototypes.weight, dim=1))
    twin = copy.deepcopy(model)  # the gradient with the codes as constants, with torch alone
    expected = torch.autograd.grad(
        swav_loss(twin, v1, v2, codes_grad=False)[0], list(twin.parameters())
    )
    with watch(model) as w:
        optimizer.zero_grad()
        loss, q1 = swav_loss(model, v1, v2, codes_grad)
        loss.backward()
        grads = [p.grad.detach().clone() for p in model.parameters()]
        optimizer.step()
    return Run(w=w, loss=float(loss.detach()), grads=grads, expected=expected,
               q_requires_grad=q1.requires_grad, q=q1.detach())  # fmt: skip


def truth(run):
    assert math.isfinite(run.loss)
    assert run.q_requires_grad
    assert torch.allclose(run.q.sum(1), torch.ones(32), atol=1e-3)
    for g, e in zip(run.grads, run.expected, strict=True):
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0)
        assert float((g - e).norm()) > 0.05 * float(e.norm())
    diff = torch.cat([(g - e).flatten() for g, e in zip(run.grads, run.expected, strict=True)])
    assert float(diff.norm()) > 0.2 * float(torch.cat([e.flatten() for e in run.expected]).norm())
