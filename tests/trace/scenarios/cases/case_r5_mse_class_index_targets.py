"""A small CNN classifier trained with ``MSELoss`` against the class indices (a batch of 8 labels,
shape (8,)) while it outputs one score per class (shape (8, 5)): the loss cannot broadcast the
two and raises before any backward; no parameter gets a gradient.  The same network trains with
``CrossEntropyLoss``.

Source: http://www.kouhan.cn/en/article/00050409 ("encountered the following error when
attempting to train with mean squared error (MSE) loss function and Adam optimizer: RuntimeError:
The size of tensor a (133) must match the size of tensor b (10) at non-singleton dimension 1";
"when using cross-entropy (CrossEntropy) loss function and stochastic gradient descent (SGD)
optimizer, the same network architecture trained successfully").
"""

import torch
from scenario_kit import FALSE_OK, Run
from torch import nn

SOURCE = "http://www.kouhan.cn/en/article/00050409"
DESCRIPTION = "MSELoss(outputs (8, 5), class indices (8,)): the loss raises a size mismatch"
ASK = ["0.weight"]
MUST = [
    [r"\braised\b", r"RuntimeError", r"exception", r"\berror\b"],
    [r"\bsize", r"shape", r"must match", r"target", r"mse", r"broadcast"],
]
MUST_NOT = [FALSE_OK]


def step(watch):
    import warnings

    torch.manual_seed(0)
    model = nn.Sequential(
        nn.Conv2d(3, 4, 3, padding=1),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Flatten(),
        nn.Linear(4 * 4 * 4, 5),
    )
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    criterion = nn.MSELoss()
    g = torch.Generator().manual_seed(1)
    x, target = torch.randn(8, 3, 8, 8, generator=g), torch.randint(0, 5, (8,), generator=g)
    error = None
    try:
        with watch(model) as w, warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # "Using a target size ..."
            opt.zero_grad()
            output = model(x)
            loss = criterion(output, target.float())
            loss.backward()
            opt.step()
    except RuntimeError as e:
        error = e
    return Run(w=w, model=model, error=error)


def truth(run):
    assert run.error is not None
    assert "must match the size of tensor b (8)" in str(run.error)
    assert all(p.grad is None for p in run.model.parameters())
