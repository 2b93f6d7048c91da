"""``torch.optim.SGD(..., momentum=1.0)``.  torch's momentum buffer is ``buf = momentum * buf +
(1 - dampening) * grad``; at ``momentum = 1`` (dampening 0) nothing ever decays: the buffer is the
sum of every gradient since the first step, and each update ``lr * buf`` keeps all of them.  Like a
ball without friction the weights overshoot the minimum and swing back: after 40 steps the loss is
well above the lowest it reached, and the watched step's update is the sum of 41 gradients.  torch
accepts the value without a warning.  Every gradient is finite and nonzero; nothing raises.

Source: https://wiki.cloudfactory.com/docs/mp-wiki/solvers-optimizers/momentum-sgd ("Momentum is
implemented by adding a term to the weight update rule of the SGD together with a parameter γ
ranging between 0 and 1. But never ever set it to 1, then bad things will happen!").  Adapted: a
``Linear(6, 16)``, ``Tanh``, ``Linear(16, 1)`` regressor on 128 examples (full batch), SGD at
0.01 with ``momentum=1.0``, 40 steps before the watched one.
"""

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://wiki.cloudfactory.com/docs/mp-wiki/solvers-optimizers/momentum-sgd"
DESCRIPTION = "SGD momentum=1.0: the buffer is the sum of all past gradients, never decays"
ASK = []
MUST = [
    [r"momentum"],
    [
        r"momentum\s*(=|of|is|set to|at)?\s*1(\.0)?\b",
        r"never decay\w*",
        r"(no|without) (friction|decay|damping)",
        r"sum of (all |every )?(the )?(past|previous|earlier)? ?gradients",
        r"oscillat\w*",
        r"overshoot\w*",
    ],
]
MUST_NOT = [FALSE_OK, CLAIMS_NONFINITE, r"all[- ]zero", r"\bzero grad\w*"]
STEPS = 40


def data():
    g = torch.Generator().manual_seed(1)
    x = torch.randn(128, 6, generator=g)
    return x, torch.sin(x[:, :1]) + 0.5 * x[:, 1:2]


def step(watch, momentum=1.0):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(6, 16), nn.Tanh(), nn.Linear(16, 1))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=momentum)
    x, y = data()
    grad_sums = [torch.zeros_like(p) for p in model.parameters()]
    losses = []

    def one_step():
        optimizer.zero_grad()
        loss = F.mse_loss(model(x), y)
        loss.backward()
        for s, p in zip(grad_sums, model.parameters(), strict=True):
            s.add_(p.grad)
        optimizer.step()
        losses.append(loss.item())

    for _ in range(STEPS):
        one_step()
    with watch(model) as w:
        one_step()
    buffers = [optimizer.state[p]["momentum_buffer"].clone() for p in model.parameters()]
    return Run(w=w, model=model, group=dict(optimizer.param_groups[0]), losses=losses,
               grad_sums=grad_sums, buffers=buffers)  # fmt: skip


def truth(run):
    assert run.group["momentum"] == 1.0 and run.group["dampening"] == 0
    for buf, total in zip(run.buffers, run.grad_sums, strict=True):
        assert torch.allclose(buf, total, rtol=1e-4, atol=1e-6)  # nothing forgotten
    assert all(torch.isfinite(torch.tensor(run.losses)))
    assert run.losses[-1] > 2 * min(run.losses)  # swung back up past its lowest loss
