"""A classifier trained with a Jacobian regulariser computed as ``torch.autograd.grad(probs, x,
grad_outputs=torch.ones_like(probs), create_graph=True)`` on the softmax probabilities: with a
vector of ones that is the gradient of ``probs.sum(1)``, the column sums of the Jacobian, not its
norm.  The probabilities of each example sum to 1 whatever the input, so those column sums are
zero up to rounding (about 1e-8 here, against a Frobenius norm of the probabilities' Jacobian
orders of magnitude larger): the penalty is about 1e-16, and the parameters' gradient is the
cross-entropy's alone.  Every gradient is finite and nonzero; nothing raises.

Source: https://www.emergentmind.com/topics/jacobian-regularization ("Jacobian Regularization is a
technique that penalizes neural network derivatives to control local sensitivity"; "Frobenius
norm: ||J_f(x)||_F^2 = sum_i sum_j (d_{x_j} f_i(x))^2. This is the most widely used regularizer
due to computational tractability and the ability to express it via stochastic estimators or
random projections").  Adapted: ``Linear(10, 32), Tanh, Linear(32, 32), Tanh, Linear(32, 5)`` on
128 examples, ``CE + 0.1 * penalty``, Adam at 1e-3; the penalty taken on the probabilities with a
ones vector (the gradient-penalty idiom) instead of a Frobenius norm or its random projection.
"""

import copy

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://www.emergentmind.com/topics/jacobian-regularization"
DESCRIPTION = "Jacobian penalty as grad(probs, x, ones): softmax sums to 1, penalty ~0, no effect"
ASK = []
MUST = [
    [
        r"sums? to (one|1)",
        r"ones_like",
        r"grad_outputs",
        r"ones? vector",
        r"vector of ones",
        r"column sums?",
        r"softmax[^\n]*(sum|constant)",
    ],
    [
        r"(jacobian|penalty|regulari[sz]\w*)[^\n]{0,80}(zero|no effect|nothing|vanish\w*|constant)",
        r"(zero|no effect|nothing|vanish\w*)[^\n]{0,80}(jacobian|penalty|regulari[sz]\w*)",
    ],
]
MUST_NOT = [
    FALSE_OK,
    CLAIMS_NONFINITE,
    r"\bdead\b",
    r"without create_graph|create_graph\s*(=\s*)?False|missing create_graph",
    r"requires_grad\s*(=|is|was)?\s*False",
]
LAMBDA = 0.1


def mlp():
    torch.manual_seed(0)
    return nn.Sequential(
        nn.Linear(10, 32), nn.Tanh(), nn.Linear(32, 32), nn.Tanh(), nn.Linear(32, 5)
    )


def data():
    g = torch.Generator().manual_seed(1)
    x = torch.randn(128, 10, generator=g)
    return x, (x[:, :5] - x[:, 5:]).argmax(1), g


def penalty_ones_on_probs(model, x, g):
    del g  # no random vectors here
    x = x.clone().requires_grad_(True)
    logits = model(x)
    probs = F.softmax(logits, dim=1)
    (g,) = torch.autograd.grad(probs, x, grad_outputs=torch.ones_like(probs), create_graph=True)
    return logits, g.pow(2).sum(1).mean()


def step(watch, penalty=penalty_ones_on_probs):
    model = mlp()
    start = copy.deepcopy(model)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    x, y, g = data()
    with watch(model) as w:
        optimizer.zero_grad()
        logits, pen = penalty(model, x, g)
        loss = F.cross_entropy(logits, y) + LAMBDA * pen
        loss.backward()
        grads = {n: p.grad.detach().clone() for n, p in model.named_parameters()}
        optimizer.step()
    # the cross-entropy's own gradient, and the probabilities' Jacobian norm, on the start copy
    ce_only = torch.autograd.grad(F.cross_entropy(start(x), y), list(start.parameters()))
    wanted = dict(zip([n for n, _ in start.named_parameters()], ce_only, strict=True))
    jac = torch.func.vmap(torch.func.jacrev(lambda v: F.softmax(start(v), dim=-1)))(x)
    frob = float(jac.detach().pow(2).sum((1, 2)).mean())
    return Run(w=w, grads=grads, wanted=wanted, penalty=float(pen.detach()), frob=frob)


def truth(run):
    assert run.penalty < 1e-12 and run.frob > 1e-4
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
        assert torch.allclose(g, run.wanted[n], rtol=1e-5, atol=1e-8), n  # the CE's alone
