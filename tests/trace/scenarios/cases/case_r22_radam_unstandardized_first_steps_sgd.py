"""``torch.optim.RAdam`` on raw features of very different scales (standard deviations 1, 100, 1000
and 10, offsets of up to 3000).  For its first steps RAdam does not use the adaptive denominator:
while the estimated length of the second-moment average ``rho_t`` is at most 5 (the first five
steps at ``beta2 = 0.999``) it takes an un-adapted momentum step, ``lr * m_hat``, which on the first
step is exactly ``lr * grad``.  The raw features give gradients of up to 7e6, so the first step
moves a weight by thousands (Adam's first step would move each by ``lr``) and the second step's
loss is some 4e8 times the first's.  Every value stays finite; nothing raises.

Source: https://danielhanchen.github.io/optimizers/radam_sadam.htm ("Essentially for the first 5
or so iterations, RAdam tries to correct for variance in the updates"; "I said that RAdam was
very unstable when data is not standardized. The authors say this is due to SGD with Momentum
going haywire. Their fix is to NOT update the parameters for 5 iterations").  Adapted: a linear
regressor ``Linear(4, 1)`` on 256 examples of four raw features, ``RAdam(lr=1e-3)``, the first two
steps watched.
"""

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://danielhanchen.github.io/optimizers/radam_sadam.htm"
DESCRIPTION = "RAdam on raw features: first steps un-adapted (lr * grad), a weight jumps by 7000"
ASK = []
MUST = [
    [
        r"radam",
        r"rectif\w*",
        r"(un-?adapted|non-?adaptive|unadaptive|plain|momentum|sgd)[^\n]{0,40}(step|update)",
        r"first (few|five|5|\d+) (steps|iterations|updates)",
        r"warm[- ]?up",
    ],
    [
        r"unscaled",
        r"unstandardi[sz]ed",
        r"not (standardi[sz]ed|normali[sz]ed|scaled)",
        r"(feature|input)s?[^\n]{0,30}scal\w*",
        r"(large|huge|big|enormous) (gradient|update|step)s?",
        r"explod\w*",
        r"diverg\w*",
    ],
]
MUST_NOT = [FALSE_OK, CLAIMS_NONFINITE, r"all[- ]zero", r"\bzero grad\w*"]
LR = 1e-3
SCALES = torch.tensor([1.0, 100.0, 1000.0, 10.0])
OFFSETS = torch.tensor([0.0, 500.0, 3000.0, 50.0])


def data():
    g = torch.Generator().manual_seed(1)
    z = torch.randn(256, 4, generator=g)
    y = z @ torch.tensor([[1.0], [-0.5], [0.8], [0.3]]) + 0.1 * torch.randn(256, 1, generator=g)
    return z * SCALES + OFFSETS, y  # raw units


def features(x):
    return x


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
        assert torch.allclose(m, -LR * g, rtol=1e-4)  # first step: lr * grad, not adapted
    assert float(run.moves[0][0].abs().max()) > 100  # a weight jumps by thousands
    assert run.losses[1] > 1e4 * run.losses[0]
    assert all(torch.isfinite(torch.tensor(run.losses)))
