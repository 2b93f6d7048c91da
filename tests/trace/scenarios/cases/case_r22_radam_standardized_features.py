"""The control of ``radam_unstandardized_first_steps_sgd``: the same RAdam regressor and data with
the four features standardised.  RAdam's first steps are still un-adapted (the first is exactly
``lr * grad``), but the gradients are of order 1, so the first two steps move each weight by about
a thousandth and the loss goes down: the rectified start behaves as a warmup.  Every gradient is
finite and nonzero.

Source: https://junaidaliop.github.io/zij/math/radam/ ("When rho_t > 4 the variance of the adaptive
learning rate is tractable and RAdam applies a rectification factor r_t"; "When rho_t <= 4 the
adaptive term is unreliable and the step falls back to momentum on the bias-corrected first
moment, which removes the need for a warmup schedule").  Adapted: the bug's ``Linear(4, 1)`` on
256 examples, features standardised (mean 0, standard deviation 1), ``RAdam(lr=1e-3)``, the first
two steps watched.
"""

import torch
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://junaidaliop.github.io/zij/math/radam/"
DESCRIPTION = "control: RAdam on standardised features: first steps lr * grad, small, loss falls"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    r"all[- ]zero",
    r"\bzero grad\w*",
    r"\bdead\b",
    r"explod\w*",
    r"diverg\w*",
]
LR = 1e-3
SCALES = torch.tensor([1.0, 100.0, 1000.0, 10.0])
OFFSETS = torch.tensor([0.0, 500.0, 3000.0, 50.0])


def data():
    g = torch.Generator().manual_seed(1)
    z = torch.randn(256, 4, generator=g)
    y = z @ torch.tensor([[1.0], [-0.5], [0.8], [0.3]]) + 0.1 * torch.randn(256, 1, generator=g)
    return z * SCALES + OFFSETS, y


def features(x):
    return (x - x.mean(0)) / x.std(0)


def step(watch):
    torch.manual_seed(0)
    model = nn.Linear(4, 1)
    optimizer = torch.optim.RAdam(model.parameters(), lr=LR)
    x, y = data()
    x = features(x)
    losses, grads, moves = [], [], []
    with watch(model) as w:
        for _ in range(2):
            before = [p.detach().clone() for p in model.parameters()]
            optimizer.zero_grad()
            loss = F.mse_loss(model(x), y)
            loss.backward()
            grads.append([p.grad.detach().clone() for p in model.parameters()])
            optimizer.step()
            moves.append([p.detach() - b for p, b in zip(model.parameters(), before, strict=True)])
            losses.append(loss.item())
    return Run(w=w, model=model, losses=losses, grads=grads, moves=moves)


def truth(run):
    for g, m in zip(run.grads[0], run.moves[0], strict=True):
        assert torch.allclose(m, -LR * g, rtol=1e-3, atol=1e-7)
    for step_moves in run.moves:
        assert max(float(m.abs().max()) for m in step_moves) < 0.01
    assert run.losses[1] < run.losses[0]
    for step_grads in run.grads:
        for g in step_grads:
            assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0)
