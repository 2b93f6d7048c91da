"""A regressor with a ReLU on its single output unit, trained on targets that are all negative
(below -1). ReLU cannot output a negative number: every example whose output pre-activation is
positive is pushed down by the MSE gradient until it is negative, and there the ReLU's derivative is
0. After a few SGD steps the pre-activation is negative for every example, the predictions are all
exactly 0 and stay there: in the watched step every parameter gets an all-zero gradient, the step
moves nothing, and the loss stays at ``mean(y ** 2)``. Nothing raises; nothing is NaN.

Source: https://math.techqa.club/are-relu-a-very-bad-choice-as-last-layer-for-regression-4483706
("if we have a single neuron as output (in our case o), which ... has always preactivation less than
0, the network will never learn anything, because the gradient will always be 0 (since do/da = 0)";
"somebody might pick ReLU seeing that the domain matches"). Adapted: ``Linear(6, 16)``, ``Tanh``,
``Linear(16, 1)``, ``ReLU``, targets ``-1 - 0.5 |x . v|``, 30 SGD steps at 0.1 before the watched
one.
"""

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://math.techqa.club/are-relu-a-very-bad-choice-as-last-layer-for-regression-4483706"
DESCRIPTION = "ReLU on the regression output, negative targets: the output unit dies, zero grads"
ASK = []
MUST = [
    [r"relu", r"\bdead\b", r"inactive", r"never (positive|active|fires)", r"\b3\b[^\n]{0,40}zero"],
    [
        r"all[- ]zero",
        r"zero grad\w*",
        r"gradients? (is |are |was |were )?(exactly )?(all )?(0|zero)",
        r"no gradient",
        r"(did not|didn't|never) (move|change)",
    ],
]
MUST_NOT = [
    FALSE_OK,
    CLAIMS_NONFINITE,
    r"not in (the |any )?optimi[sz]er",
    r"requires_grad\s*(=|is|was)?\s*False",
]
PRE_STEPS = 30


def make_model():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(6, 16), nn.Tanh(), nn.Linear(16, 1), nn.ReLU())


def data():
    g = torch.Generator().manual_seed(1)
    x = torch.randn(64, 6, generator=g)
    v = torch.randn(6, generator=g)
    return x, (-1 - 0.5 * (x @ v).abs()).unsqueeze(1)  # every target below -1


def step(watch):
    model = make_model()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = data()
    for _ in range(PRE_STEPS):  # the training so far
        optimizer.zero_grad()
        F.mse_loss(model(x), y).backward()
        optimizer.step()
    before = [p.detach().clone() for p in model.parameters()]
    with watch(model) as w:
        optimizer.zero_grad()
        pred = model(x)
        loss = F.mse_loss(pred, y)
        loss.backward()
        grads = [p.grad.detach().clone() for p in model.parameters()]
        optimizer.step()
    with torch.no_grad():
        pre = model[:3](x)  # the output unit's pre-activation
    return Run(w=w, model=model, x=x, y=y, pred=pred.detach(), pre=pre, loss=loss.item(),
               grads=grads, before=before)  # fmt: skip


def truth(run):
    assert isinstance(run.model[-1], nn.ReLU)
    assert bool((run.y < -1).all())
    assert bool((run.pre < 0).all())  # the output unit is off for every example
    assert bool((run.pred == 0).all())
    assert abs(run.loss - float((run.y**2).mean())) < 1e-5
    for g, b, p in zip(run.grads, run.before, run.model.parameters(), strict=True):
        assert bool((g == 0).all())  # all-zero gradients
        assert torch.equal(p.detach(), b)  # the step moved nothing
