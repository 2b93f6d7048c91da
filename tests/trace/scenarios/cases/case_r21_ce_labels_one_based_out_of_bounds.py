"""Class labels read as 1 to 5 (a table that numbers its classes from 1) fed to
``nn.CrossEntropyLoss`` with 5 logits per example.  Class indices must lie in ``[0, C - 1]``; label
5 is one past the last logit, and on the CPU the loss raises ``IndexError: Target 5 is out of
bounds.`` in its forward.  No backward runs: every ``.grad`` stays ``None`` and nothing moves.

Source: https://taourl.com/read-2964347.html ("This error occurs when the target labels provided to
the loss function contain invalid values, specifically negative indices or values exceeding the
number of classes. The ``CrossEntropyLoss`` function expects target labels to be within the range
``[0, C-1]``, where ``C`` is the number of classes").  Adapted: a ``Linear(8, 16)``, ``Tanh``,
``Linear(16, 5)`` classifier on 64 examples whose labels run from 1 to 5, SGD at 0.1.
"""

import torch
from scenario_kit import FALSE_OK, Run
from torch import nn

SOURCE = "https://taourl.com/read-2964347.html"
DESCRIPTION = "CrossEntropyLoss on labels 1..5 with 5 logits: Target 5 is out of bounds (raises)"
ASK = []
MUST = [
    [r"\braised\b", r"IndexError", r"exception", r"\berror\b"],
    [
        r"out of bounds",
        r"target 5",
        r"(1|one)[- ]based",
        r"\[0, ?(C|4|n_classes|num_classes)",
        r"(number of|num) classes",
        r"off[- ]by[- ]one",
        r"(label|target)s?[^\n]{0,80}(range|exceed|too large|>= ?5)",
    ],
]
MUST_NOT = [FALSE_OK]


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
    target = labels
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
    assert int(run.target.min()) == 1 and int(run.target.max()) == 5
    assert run.error is not None and "out of bounds" in str(run.error)
    for p, b in zip(run.model.parameters(), run.before, strict=True):
        assert p.grad is None and torch.equal(p.detach(), b)
