"""A one-layer linear regression whose ``forward`` calls ``x.squeeze()`` without assigning the
result: the prediction keeps shape (N, 1) while the target has shape (N,).  ``MSELoss``
broadcasts the two to (N, N) (with only a UserWarning), so every prediction is pulled towards
every target: the model is fitted to the mean of the targets, and its loss "randomly oscillates"
instead of going down.  The gradients are finite and nonzero.

Source: https://discuss.pytorch.org/t/why-the-model-fail-to-converge-without-a-manul-weight-initialization/50431
("Without this line, the model never converge, the training loss just randomly oscillates";
its ``forward`` is ``x = self.layer1(x); x.squeeze(); return x`` and the target is
``data[:, input_dim]``, of shape (N,)).
"""

import torch
from scenario_kit import FALSE_OK, Run
from torch import nn

SOURCE = (
    "https://discuss.pytorch.org/t/"
    "why-the-model-fail-to-converge-without-a-manul-weight-initialization/50431"
)
DESCRIPTION = "output (N, 1) against target (N,): MSELoss broadcasts to (N, N), fits the mean"
ASK = []
MUST = [
    [
        r"broadcast",
        r"shapes?[^\n]{0,40}(differ|mismatch|match)",
        r"target[^\n]{0,20}\(\s*32\s*,?\s*\)",
        r"\(\s*32\s*,\s*32\s*\)",
        r"target (size|shape)",
        r"size[^\n]{0,40}(differ|mismatch|match)",
        r"squeeze",
    ]
]
MUST_NOT = [FALSE_OK]


class Net(nn.Module):
    def __init__(self, fixed=False):
        super().__init__()
        self.layer1 = nn.Linear(2, 1, bias=False)
        self.fixed = fixed

    def forward(self, x):
        x = self.layer1(x)
        if self.fixed:
            x = x.squeeze(-1)
        else:
            x.squeeze()  # result thrown away: x is still (N, 1)
        return x


def data():
    g = torch.Generator().manual_seed(1)
    x = torch.randn(32, 2, generator=g)
    y = 5 * x[:, 0] + 3 * x[:, 1] + 0.1 * torch.randn(32, generator=g)
    return x, y


def step(watch, fixed=False):
    import warnings

    torch.manual_seed(0)
    model = Net(fixed)
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    criterion = nn.MSELoss()
    x, y = data()
    with watch(model) as w:
        opt.zero_grad()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # "Using a target size ..."
            pred = model(x)
            loss = criterion(pred, y)
        loss.backward()
        opt.step()
    return Run(w=w, model=model, pred=pred.detach(), grad=model.layer1.weight.grad.clone())


def right_grad():
    """The gradient of the mean squared error with prediction and target of the same shape."""
    torch.manual_seed(0)
    model = Net(fixed=True)
    x, y = data()
    nn.MSELoss()(model(x), y).backward()
    return model.layer1.weight.grad


def truth(run):
    assert run.pred.shape == (32, 1)  # target is (32,): broadcast to (32, 32)
    assert bool(torch.isfinite(run.grad).all()) and bool(run.grad.abs().sum() > 0)
    assert not torch.allclose(run.grad, right_grad(), rtol=0.1)
