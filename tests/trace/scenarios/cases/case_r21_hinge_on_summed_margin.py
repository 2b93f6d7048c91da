"""A linear classifier trained with a hinge loss taken once over the whole batch, ``max(0, 1 -
sum_i y_i x_i . w)``, instead of per example.  The summed margin grows by 0.25 per step on the
thread's four points, and once it passes 1 the clamp at 0 passes no gradient: the weight's
gradient is exactly zero and the step moves nothing, while one example is still misclassified and
two more sit inside the margin (their own hinge losses are positive and would give a nonzero
gradient).  Nothing raises; nothing is NaN.

Source: https://huggingface.co/datasets/nvidia/Nemotron-CC-Math-v1 (question 'Gradient of Hinge
Loss', a Cross Validated copy: "I'm trying to implement basic gradient descent and I'm testing it
with a hinge loss function"; ``hinge <- function(w, x, y) { max(1 - y %*% x %*% w, 0) }``,
``d_hinge``: ``dw <- t(-y %*% x)``, ``dw[y %*% x %*% w >= 1] <- 0``; "The loss function reduces by
0.25 each time but converges too fast, and the resulting weights do not result in a good
classification").  Adapted: the question's R code in torch, its four points (a column of ones and
two features) and labels, ``w`` a ``Linear(3, 1, bias=False)`` started at zero as in the question,
SGD at 0.01; five steps before the watched one.
"""

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn

SOURCE = (
    "https://huggingface.co/datasets/nvidia/Nemotron-CC-Math-v1 (question 'Gradient of Hinge Loss')"
)
DESCRIPTION = "hinge loss max(0, 1 - sum of margins) over the batch: zero gradient, 1 misclassified"
ASK = ["weight"]
MUST = [
    [
        r"all[- ]zero",
        r"\bzero grad\w*",
        r"gradients? (is |are |was |were )?(exactly )?(all )?(0|zero)",
        r"no gradient",
        r"(did not|didn't|never) (move|change)",
    ],
    [
        r"clamp\w*",
        r"hinge",
        r"margin",
        r"max\(0",
        r"relu",
        r"sum\w*[^\n]{0,60}(batch|examples|margins)",
    ],
]
MUST_NOT = [
    FALSE_OK,
    CLAIMS_NONFINITE,
    r"requires_grad\s*(=|is|was)?\s*False",
    r"not in (the |any )?optimi[sz]er",
]

X = torch.tensor([[1.0, 3, 6], [1, 4, 2], [1, 5, 4], [1, 6, 1]])  # the question's x
Y = torch.tensor([1.0, 1, -1, -1])  # the question's y


def summed_hinge(model):
    return torch.clamp(1 - (Y * model(X).squeeze(1)).sum(), min=0)


def step(watch):
    model = nn.Linear(3, 1, bias=False)
    with torch.no_grad():
        model.weight.zero_()  # w <- matrix(0, nrow=ncol(x))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    for _ in range(5):
        optimizer.zero_grad()
        summed_hinge(model).backward()
        optimizer.step()
    before = model.weight.detach().clone()
    with watch(model) as w:
        optimizer.zero_grad()
        loss = summed_hinge(model)
        loss.backward()
        grad = model.weight.grad.detach().clone()
        optimizer.step()
    return Run(w=w, model=model, before=before, grad=grad, loss=loss.item())


def truth(run):
    assert run.loss == 0.0
    assert bool((run.grad == 0).all())  # present and exactly zero
    assert torch.equal(run.model.weight.detach(), run.before)
    margins = Y * (X @ run.before[0])
    assert int((margins <= 0).sum()) >= 1  # still misclassified
    assert int((margins < 1).sum()) >= 3  # inside the margin: per-example hinge positive
    w = run.before.clone().requires_grad_(True)
    per_example = torch.clamp(1 - Y * (X @ w[0]), min=0).mean()
    (g,) = torch.autograd.grad(per_example, [w])
    assert bool(g.abs().sum() > 0)  # the per-example hinge would still move w
