"""A healthy step people suspect: an L1 penalty ``lambda * sum(|w|)`` over the weight matrices added
to the loss of a small classifier whose first layer was magnitude-pruned (the 40 % smallest weights
set to exactly 0).  ``|w|`` is not differentiable at 0 and torch takes 0 there (``sign(0) = 0``):
each weight's gradient is the data gradient plus ``lambda * sign(w)``, the pruned weights get the
data gradient alone.  Nothing is undefined or non-finite; every gradient tensor is nonzero.

Source: https://apxml.com/courses/deep-learning-regularization-optimization/chapter-2-weight-regularization/l1-regularization-math
("the L1 penalty adds a constant value (λ or −λ) to the gradient of the data loss"; "What
happens when w_j = 0? The absolute value function isn't differentiable at this point ... A common
practical approach is to simply set the gradient contribution from the L1 term to zero").
Adapted: a tanh MLP on 3 classes, the penalty on ``weight`` tensors only, Adam.
"""

import torch
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = (
    "https://apxml.com/courses/deep-learning-regularization-optimization/"
    "chapter-2-weight-regularization/l1-regularization-math"
)
DESCRIPTION = "healthy: L1 penalty on pruned weights (exact zeros): subgradient 0 there, all finite"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    r"undefined",
    r"not differentiable[^\n]{0,60}(wrong|bug|problem|no gradient)",
    r"no gradient",
    r"all-zero",
    r"dead (units?|relu|neurons?)",
]
LAMBDA = 1e-3


def make_model():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(10, 24), nn.Tanh(), nn.Linear(24, 3))
    with torch.no_grad():
        w = model[0].weight
        cut = w.abs().flatten().kthvalue(int(0.4 * w.numel())).values
        w[w.abs() <= cut] = 0.0
    return model


def batch():
    g = torch.Generator().manual_seed(1)
    return torch.randn(48, 10, generator=g), torch.randint(0, 3, (48,), generator=g)


def penalty(model):
    return LAMBDA * sum(p.abs().sum() for n, p in model.named_parameters() if n.endswith("weight"))


def step(watch):
    model = make_model()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    x, y = batch()
    with watch(model) as w:
        opt.zero_grad()
        data_loss = F.cross_entropy(model(x), y)
        loss = data_loss + penalty(model)
        loss.backward()
        grads = {n: p.grad.detach().clone() for n, p in model.named_parameters()}
        opt.step()
    ref = make_model()
    data_grads = torch.autograd.grad(F.cross_entropy(ref(x), y), list(ref.parameters()))
    weights = {n: p.detach().clone() for n, p in ref.named_parameters()}
    return Run(
        w=w, grads=grads, data_grads=dict(zip(weights, data_grads, strict=True)), weights=weights
    )


def truth(run):
    zeros = run.weights["0.weight"] == 0
    assert int(zeros.sum()) >= 90  # 40 % of 240 pruned
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
        expected = run.data_grads[n]
        if n.endswith("weight"):
            expected = expected + LAMBDA * torch.sign(run.weights[n])
        assert torch.allclose(g, expected, atol=1e-7), n
    g0 = run.grads["0.weight"]
    assert torch.allclose(g0[zeros], run.data_grads["0.weight"][zeros], atol=1e-8)
