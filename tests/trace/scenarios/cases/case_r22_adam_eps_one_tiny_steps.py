"""``torch.optim.Adam(..., eps=1.0)``, the value a TensorFlow answer recommends, on a regression
whose gradients are of order 1e-3 (targets of scale 0.01, a small-output initialisation of the last
layer).  Adam divides by ``sqrt(v_hat) + eps``; with ``sqrt(v_hat)`` about ``|g|`` and far below
``eps = 1``, the step becomes ``lr * m_hat / 1``, plain SGD at the same learning rate: the first
step moves every parameter by less than 2% of ``lr`` where the default ``eps = 1e-8`` would move
each by about ``lr``.  The model barely trains.  Every gradient is finite and nonzero; nothing
raises.

Source: https://devpeace.com/machine-learning/43221065/how-does-the-epsilon-hyperparameter-affect-tf-train-adamoptimizer
("When I set epsilon=10e-8, AdamOptimizer doesn't work. When I set it to 1, it works just fine";
"the bigger you make epsilon (and the denominator), the smaller the weight updates are and thus
slower the training progress will be"; "when training an Inception network on ImageNet a current
good choice is 1.0 or 0.1").  Adapted: the answer's ``epsilon = 1.0`` in torch's Adam at ``lr =
1e-3``, a ``Linear(20, 32)``, ``Tanh``, ``Linear(32, 1)`` regressor with the last weight scaled
by 0.01 and its bias zeroed, 256 examples, the first step watched.
"""

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = (
    "https://devpeace.com/machine-learning/43221065/"
    "how-does-the-epsilon-hyperparameter-affect-tf-train-adamoptimizer"
)
DESCRIPTION = "Adam(eps=1.0) on gradients ~1e-3: eps dominates the denominator, steps < 2% of lr"
ASK = []
MUST = [
    [r"\beps(ilon)?\b"],
    [
        r"(tiny|small|negligible|minuscule)[^\n]{0,40}(step|update|move)",
        r"(step|update)s?[^\n]{0,40}(tiny|small|negligible|barely)",
        r"\beps(ilon)?\s*(=|of|is)?\s*1(\.0)?\b",
        r"dominat\w*",
        r"\bsgd\b",
        r"too (large|big|high)",
    ],
]
MUST_NOT = [
    FALSE_OK,
    CLAIMS_NONFINITE,
    r"all[- ]zero",
    r"\bzero grad\w*",
    r"requires_grad\s*(=|is|was)?\s*False",
]
LR = 1e-3


def data():
    g = torch.Generator().manual_seed(1)
    x = torch.randn(256, 20, generator=g)
    return x, 0.01 * torch.tanh(x[:, :1] - x[:, 1:2])  # targets of scale 0.01


def build():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(20, 32), nn.Tanh(), nn.Linear(32, 1))
    with torch.no_grad():
        model[2].weight.mul_(0.01)  # small-output initialisation
        model[2].bias.zero_()
    return model


def step(watch, eps=1.0):
    model = build()
    optimizer = torch.optim.Adam(model.parameters(), lr=LR, eps=eps)
    x, y = data()
    before = [p.detach().clone() for p in model.parameters()]
    with watch(model) as w:
        optimizer.zero_grad()
        loss = F.mse_loss(model(x), y)
        loss.backward()
        grads = [p.grad.detach().clone() for p in model.parameters()]
        optimizer.step()
    moves = [(p.detach() - b).abs() for p, b in zip(model.parameters(), before, strict=True)]
    return Run(w=w, model=model, eps=optimizer.param_groups[0]["eps"], grads=grads, moves=moves)


def truth(run):
    assert run.eps == 1.0
    for g, m in zip(run.grads, run.moves, strict=True):
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0)
        assert float(g.abs().max()) < 0.02  # gradients far below eps
        assert float(m.max()) < 0.02 * LR  # every step a sliver of lr
        # first Adam step: lr * g / (|g| + eps), up to float32 rounding of the parameters
        assert torch.allclose(m, LR * g.abs() / (g.abs() + 1.0), rtol=1e-2, atol=1e-7)
