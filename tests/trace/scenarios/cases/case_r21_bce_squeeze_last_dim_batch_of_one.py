"""Control: the same classifier with the logits flattened by ``.squeeze(1)``, naming the dimension
to remove: ``(32, 1)`` becomes ``(32,)`` and the last batch's ``(1, 1)`` becomes ``(1,)``, the
shape of its target.  Both steps run; every gradient is finite and nonzero and every parameter
moves at both steps.

Source: https://openillumi.com/en/en-pytorch-squeeze-unsqueeze-dimension-mastery ("the squeeze()
operation is strictly conditional: it only removes dimensions whose size is 1"; ``x_squeezed =
x.squeeze(0)``: "Conditional removal: Works because dim 0 is size 1").  Adapted as the bug:
``Linear(6, 16)``, ``Tanh``, ``Linear(16, 1)``, 33 examples in batches of 32 and 1, SGD at 0.1.
"""

import torch
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK, Run
from torch import nn

SOURCE = "https://openillumi.com/en/en-pytorch-squeeze-unsqueeze-dimension-mastery"
DESCRIPTION = "control: logits.squeeze(1) keeps the batch dimension of a batch of one: healthy"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [CLAIMS_NONFINITE, CLAIMS_ERROR, r"all[- ]zero", r"\bzero grad\w*", r"\bdead\b"]


def data():
    g = torch.Generator().manual_seed(1)
    x = torch.randn(33, 6, generator=g)
    return x, (x[:, 0] + x[:, 1] > 0).float()


def step(watch):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(6, 16), nn.Tanh(), nn.Linear(16, 1))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    loss_fn = nn.BCEWithLogitsLoss()
    x, y = data()
    snapshots = [[p.detach().clone() for p in model.parameters()]]
    grads, error = [], None
    try:
        with watch(model) as w:
            for batch in (slice(0, 32), slice(32, 33)):
                optimizer.zero_grad()
                loss = loss_fn(model(x[batch]).squeeze(1), y[batch])
                loss.backward()
                grads.append([p.grad.detach().clone() for p in model.parameters()])
                optimizer.step()
                snapshots.append([p.detach().clone() for p in model.parameters()])
    except ValueError as e:
        error = e
    return Run(w=w, model=model, error=error, grads=grads, snapshots=snapshots)


def truth(run):
    assert run.error is None and len(run.grads) == 2
    for grads in run.grads:
        for g in grads:
            assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0)
    for before, after in zip(run.snapshots, run.snapshots[1:]):  # noqa: B905
        for b, a in zip(before, after, strict=True):
            assert not torch.equal(a, b)
