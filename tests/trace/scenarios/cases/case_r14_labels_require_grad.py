"""A healthy step people suspect: a regressor trained with the targets created with
``requires_grad=True`` (to read the loss's sensitivity to the labels).  The targets are a leaf of
the graph outside the model: ``loss.backward()`` fills ``labels.grad`` as well, but the model's
parameters get exactly the gradients they get with plain targets (checked against a copy trained
on detached targets), and the step is the same.  Every parameter gradient is finite and nonzero;
nothing raises.

Source: https://taourl.com/read-2374738.html ("If gradients with respect to labels are needed ...
explicitly enabling ``requires_grad`` for label tensors allows gradient computation"; its example
``labels = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)`` with an MSE loss).  Adapted: a tanh
MLP regressor with Adam instead of the page's ``2 * inputs + 1``.
"""

import copy

import torch
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK, Run
from torch import nn

SOURCE = "https://taourl.com/read-2374738.html"
DESCRIPTION = "healthy: targets with requires_grad=True: labels.grad filled, model grads unchanged"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    r"no gradient",
    r"all-zero",
    r"target\w*[^\n]{0,40}not detached",
    r"(gradient|grad) (flows?|leaks?) into[^\n]{0,30}(model|parameter)",
]


def step(watch):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(5, 16), nn.Tanh(), nn.Linear(16, 1))
    reference = copy.deepcopy(model)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    g = torch.Generator().manual_seed(1)
    x = torch.randn(24, 5, generator=g)
    labels = torch.randn(24, 1, generator=g).requires_grad_(True)
    with watch(model) as w:
        opt.zero_grad()
        loss = torch.mean((model(x) - labels) ** 2)
        loss.backward()
        opt.step()
    grads = [p.grad.detach().clone() for p in model.parameters()]
    ref_loss = torch.mean((reference(x) - labels.detach()) ** 2)
    ref_grads = torch.autograd.grad(ref_loss, list(reference.parameters()))
    return Run(w=w, grads=grads, ref_grads=ref_grads, labels_grad=labels.grad)


def truth(run):
    assert run.labels_grad is not None and bool(run.labels_grad.abs().sum() > 0)
    for gr, ref in zip(run.grads, run.ref_grads, strict=True):
        assert bool(torch.isfinite(gr).all()) and bool(gr.abs().sum() > 0)
        assert torch.allclose(gr, ref, atol=1e-7)
