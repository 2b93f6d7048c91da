"""Control: the same 1-to-5 labels shifted by one, ``labels - 1``, so that they run from 0 to 4,
the range ``nn.CrossEntropyLoss`` expects for 5 logits.  The step is ordinary: every gradient is
finite and nonzero and every parameter moves.

Source: https://taourl.com/read-2964347.html ("To fix this issue, ensure all target labels are
non-negative and less than the number of classes"; ``targets = torch.tensor([0, 3, 4]) # Valid
targets (assuming 5 classes)``).  Adapted as the bug: ``Linear(8, 16)``, ``Tanh``,
``Linear(16, 5)``, 64 examples, SGD at 0.1.
"""

import torch
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK, Run
from torch import nn

SOURCE = "https://taourl.com/read-2964347.html"
DESCRIPTION = "control: 1-based labels shifted to 0..4 before CrossEntropyLoss: healthy"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [CLAIMS_NONFINITE, CLAIMS_ERROR, r"out of bounds", r"all[- ]zero", r"\bdead\b"]


def data():
    g = torch.Generator().manual_seed(1)
    x = torch.randn(64, 8, generator=g)
    mix = torch.randn(8, 5, generator=g)
    return x, (x @ mix).argmax(1) + 1  # classes numbered from 1


def step(watch):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 16), nn.Tanh(), nn.Linear(16, 5))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    loss_fn = nn.CrossEntropyLoss()
    x, labels = data()
    target = labels - 1
    before = [p.detach().clone() for p in model.parameters()]
    error, grads = None, None
    try:
        with watch(model) as w:
            optimizer.zero_grad()
            loss = loss_fn(model(x), target)
            loss.backward()
            grads = [p.grad.detach().clone() for p in model.parameters()]
            optimizer.step()
    except IndexError as e:
        error = e
    return Run(w=w, model=model, target=target, before=before, error=error, grads=grads)


def truth(run):
    assert run.error is None
    assert int(run.target.min()) == 0 and int(run.target.max()) == 4
    for g, b, p in zip(run.grads, run.before, run.model.parameters(), strict=True):
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0)
        assert not torch.equal(p.detach(), b)
