"""Control: the same four points and linear classifier trained with the hinge loss per example,
``mean_i max(0, 1 - y_i x_i . w)``: the gradient of a sum is the sum of the examples' gradients,
``-y_i x_i`` for each example inside the margin and 0 for the others.  After five steps every
example is still inside the margin, the weight's gradient is finite and nonzero (its entry for the
column of ones is 0, the labels summing to 0) and the step moves the weight.

Source: https://cfs.mostlyvoid.xyz/videos?q=gradient+of+hinge+loss&source=vcluster (the same Cross
Validated question's answers: "Gradient of each component is: 0 if y_i w . x >= 1, -y_i x if y_i
w . x < 1"; "The gradient of the sum is a sum of gradients").  Adapted as the bug: the question's
four points, ``Linear(3, 1, bias=False)`` started at zero, SGD at 0.01, five steps before the
watched one.
"""

import torch
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK, Run
from torch import nn

SOURCE = "https://cfs.mostlyvoid.xyz/videos?q=gradient+of+hinge+loss&source=vcluster"
DESCRIPTION = "control: hinge loss per example, averaged: every example inside the margin trains"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [CLAIMS_NONFINITE, CLAIMS_ERROR, r"all[- ]zero", r"\bzero grad\w*", r"\bdead\b"]

X = torch.tensor([[1.0, 3, 6], [1, 4, 2], [1, 5, 4], [1, 6, 1]])
Y = torch.tensor([1.0, 1, -1, -1])


def per_example_hinge(model):
    return torch.clamp(1 - Y * model(X).squeeze(1), min=0).mean()


def step(watch):
    model = nn.Linear(3, 1, bias=False)
    with torch.no_grad():
        model.weight.zero_()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    for _ in range(5):
        optimizer.zero_grad()
        per_example_hinge(model).backward()
        optimizer.step()
    before = model.weight.detach().clone()
    with watch(model) as w:
        optimizer.zero_grad()
        loss = per_example_hinge(model)
        loss.backward()
        grad = model.weight.grad.detach().clone()
        optimizer.step()
    return Run(w=w, model=model, before=before, grad=grad, loss=loss.item())


def truth(run):
    margins = Y * (X @ run.before[0])
    active = margins < 1
    assert bool(active.all())
    expected = -(Y[active, None] * X[active]).sum(0) / len(Y)
    assert torch.allclose(run.grad[0], expected, atol=1e-7)
    assert bool(torch.isfinite(run.grad).all()) and bool(run.grad.abs().sum() > 0)
    assert not torch.equal(run.model.weight.detach(), run.before)
