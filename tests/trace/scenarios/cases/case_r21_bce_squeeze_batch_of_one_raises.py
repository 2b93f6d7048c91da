"""A binary classifier whose ``(N, 1)`` logits are flattened with ``.squeeze()`` before
``nn.BCEWithLogitsLoss`` against ``(N,)`` targets.  ``squeeze()`` removes every dimension of size
1: for a batch of 32 it gives ``(32,)`` and the first step trains, but the epoch's last batch holds
one example (33 examples, batches of 32), where ``squeeze()`` also removes the batch dimension and
gives a 0-d tensor.  The loss then raises ``ValueError: Target size (torch.Size([1])) must be the
same as input size (torch.Size([]))``: the second step never runs its backward or its update.

Source: https://fedorkobak.github.io/python/torch/tensor/dimentionality/squeeze.html ("The
torch.squeeze function and the torch.Tensor.squeeze method remove dimensions from a tensor that
have a size of one"; "Practical case": "a fully connected layer with dimensionality [D, 1] is
commonly used as the final layer of a neural network ... This layer outputs a matrix with
dimensionality [n, 1]"; "If your target is simply a vecto[r]").  Adapted: a ``Linear(6, 16)``,
``Tanh``, ``Linear(16, 1)`` classifier, 33 examples in batches of 32 and 1, SGD at 0.1.
"""

import torch
from scenario_kit import FALSE_OK, Run
from torch import nn

SOURCE = "https://fedorkobak.github.io/python/torch/tensor/dimentionality/squeeze.html"
DESCRIPTION = "logits.squeeze() on a last batch of one: 0-d input vs (1,) target, BCE raises"
ASK = []
MUST = [
    [r"\braised\b", r"ValueError", r"exception", r"\berror\b"],
    [
        r"squeeze",
        r"torch\.Size\(\[\]\)",
        r"0-?d\b",
        r"scalar",
        r"batch (of|size) (one|1)\b",
        r"(size|shape)s?[^\n]{0,60}(mismatch|differ|must be the same)",
    ],
]
MUST_NOT = [FALSE_OK]


def data():
    g = torch.Generator().manual_seed(1)
    x = torch.randn(33, 6, generator=g)
    return x, (x[:, 0] + x[:, 1] > 0).float()


def step(watch, squeeze_dim=None):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(6, 16), nn.Tanh(), nn.Linear(16, 1))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    loss_fn = nn.BCEWithLogitsLoss()
    x, y = data()
    snapshots = [[p.detach().clone() for p in model.parameters()]]
    error, steps_done = None, 0
    try:
        with watch(model) as w:
            for batch in (slice(0, 32), slice(32, 33)):
                optimizer.zero_grad()
                out = model(x[batch])
                logits = out.squeeze() if squeeze_dim is None else out.squeeze(squeeze_dim)
                loss = loss_fn(logits, y[batch])
                loss.backward()
                optimizer.step()
                steps_done += 1
                snapshots.append([p.detach().clone() for p in model.parameters()])
    except ValueError as e:
        error = e
    return Run(w=w, model=model, squeeze_dim=squeeze_dim, error=error, steps_done=steps_done,
               snapshots=snapshots)  # fmt: skip


def truth(run):
    assert run.squeeze_dim is None
    assert run.steps_done == 1  # the batch of 32 trained, the batch of one raised
    assert run.error is not None and "must be the same as input size" in str(run.error)
    assert "torch.Size([])" in str(run.error)
    for p, s in zip(run.model.parameters(), run.snapshots[1], strict=True):
        assert torch.equal(p.detach(), s)  # nothing moved at the second step
