"""Control: the same MAML meta-step on two sine-regression tasks written with fast weights: the
inner step takes ``torch.autograd.grad(support_loss, params, create_graph=True)`` and forms
``params - alpha * grad``; the query loss runs the model on those fast weights through
``torch.func.functional_call`` and its backward reaches the model's own parameters through the
inner step (second-order terms included); the meta-optimizer (Adam over the model's parameters)
steps once for the two tasks.  Every parameter gets a finite, nonzero meta-gradient, equal to the
one plain torch computes with ``torch.autograd.grad`` and different from the first-order one.

Source: https://yanda-notes.pages.dev/ML/papers/MAML ("Creates a copy of the initialization
weights; Runs an iteration of gradient descent for a random task on the copy; Backpropagates the
loss on a test set through the iteration of gradient descent and back to the initial weights";
its ``maml_sine`` with ``create_graph=not first_order`` and ``param - lr_inner * grad``).
"""

import torch
from case_r15_maml_param_rebinding_autograd_raises import INNER_LR, make_model, tasks
from scenario_kit import CLAIMS_ERROR, CLAIMS_NO_ZERO_GRAD, CLAIMS_NONFINITE, HEALTHY_OK, Run
from torch.func import functional_call
from torch.nn import functional as F

SOURCE = "https://yanda-notes.pages.dev/ML/papers/MAML"
DESCRIPTION = "control: MAML with fast weights, create_graph=True, functional_call: meta-grads flow"
ASK = []
MUST = [[HEALTHY_OK, r"^summary:[^\n]*(MAML|meta|inner[- ]loop|fast weights|create_graph)"]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    CLAIMS_NO_ZERO_GRAD,
    r"no gradient",
    r"all-zero",
    r"not in (the |any )?optimizer",
    r"detach\w*",
]


def meta_loss(model, create_graph=True):
    params = dict(model.named_parameters())
    total = 0.0
    for xs, ys, xq, yq in tasks():
        support = F.mse_loss(functional_call(model, params, (xs,)), ys)
        grads = torch.autograd.grad(support, list(params.values()), create_graph=create_graph)
        fast = {n: p - INNER_LR * g for (n, p), g in zip(params.items(), grads, strict=True)}
        total = total + F.mse_loss(functional_call(model, fast, (xq,)), yq)
    return total


def step(watch):
    model = make_model()
    meta_opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    with watch(model) as w:
        meta_opt.zero_grad()
        loss = meta_loss(model)
        loss.backward()
        grads = [p.grad.detach().clone() for p in model.parameters()]
        meta_opt.step()
    ref_model = make_model()
    ref = torch.autograd.grad(meta_loss(ref_model), list(ref_model.parameters()))
    first = torch.autograd.grad(
        meta_loss(ref_model, create_graph=False), list(ref_model.parameters())
    )
    return Run(w=w, grads=grads, ref=ref, first=first)


def truth(run):
    for g, r in zip(run.grads, run.ref, strict=True):
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0)
        assert torch.allclose(g, r, atol=1e-6)
    diff = sum(float((r - f).abs().sum()) for r, f in zip(run.ref, run.first, strict=True))
    assert diff > 1e-4  # the second-order terms are there
