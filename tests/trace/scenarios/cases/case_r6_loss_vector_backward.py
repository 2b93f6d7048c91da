"""A regression loss built with ``nn.MSELoss(reduction="none")`` (one value per element, meant
for weighting later) and ``loss.backward()`` called on it directly: the loss is a (16, 1) tensor,
not a scalar, and ``backward`` raises "grad can be implicitly created only for scalar outputs".
No gradient reaches the model and the step never runs.

Source: https://www.pythonclear.com/errors/runtimeerror-grad-can-be-implicitly-created-only-for-scalar-outputs/
("A common case of this RuntimeError ... arises during computation of gradients for a non-scalar
(a tensor with multiple elements) output"; "loss.backward() # Raises RuntimeError: grad can be
implicitly created only for scalar outputs").
"""

import torch
from scenario_kit import FALSE_OK, Run
from torch import nn

SOURCE = (
    "https://www.pythonclear.com/errors/"
    "runtimeerror-grad-can-be-implicitly-created-only-for-scalar-outputs/"
)
DESCRIPTION = "MSELoss(reduction='none') then loss.backward(): not a scalar, backward raises"
ASK = ["0.weight"]
MUST = [
    [r"\braised\b", r"RuntimeError", r"exception", r"\berror\b"],
    [r"scalar", r"reduction", r"implicitly created", r"\(16, 1\)", r"not a single"],
]
MUST_NOT = [FALSE_OK]


def step(watch, reduce: bool = False):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(5, 16), nn.ReLU(), nn.Linear(16, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    criterion = nn.MSELoss(reduction="none")
    g = torch.Generator().manual_seed(1)
    x, y = torch.randn(16, 5, generator=g), torch.randn(16, 1, generator=g)
    error = None
    with watch(model) as w:
        opt.zero_grad()
        loss = criterion(model(x), y)
        if reduce:
            loss = loss.mean()
        try:
            loss.backward()
            opt.step()
        except RuntimeError as e:
            error = e
    return Run(w=w, model=model, error=error, loss_shape=tuple(loss.shape))


def truth(run):
    assert run.loss_shape == (16, 1)
    assert run.error is not None and "scalar outputs" in str(run.error)
    for p in run.model.parameters():
        assert p.grad is None
