"""Transfer learning with a replaced head, then the page's "fix" to freeze the backbone: every
parameter gets ``requires_grad = False`` and then ``model.fc.requires_grad = True``.  The second
line sets a plain Python attribute on the ``nn.Linear`` module (``Module`` has no such flag; the
method is ``requires_grad_()``), silently: the head's weight and bias stay frozen like the rest.
No parameter requires a gradient, the loss has no ``grad_fn``, and ``loss.backward()`` raises
``RuntimeError: element 0 of tensors does not require grad and does not have a grad_fn``.  Every
``.grad`` stays ``None`` and nothing moves.

Source: https://theneuralbase.com/pytorch/learn/intermediate/replacing-the-classification-head/
("Always freeze backbone before training new head to prevent catastrophic forgetting: for param
in model.parameters(): param.requires_grad = False; then model.fc.requires_grad = True"; ``# FIX:
Freeze backbone before training new head``).  Adapted: the head replaced first (``model.fc =
nn.Linear(32, 5)`` for a "pretrained" 10-class head), then the page's two freezing lines; a
``Linear(10, 32)``, ``Tanh``, ``Linear(32, 32)``, ``Tanh`` body, SGD at 0.1 over
``model.fc.parameters()``, 64 examples.
"""

import torch
from scenario_kit import FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://theneuralbase.com/pytorch/learn/intermediate/replacing-the-classification-head/"
DESCRIPTION = "model.fc.requires_grad = True sets a module attribute: head frozen, backward raises"
ASK = ["fc.weight"]
MUST = [
    [r"\braised\b", r"RuntimeError", r"exception", r"\berror\b", r"does not require grad"],
    [r"requires_grad", r"frozen", r"freez\w*"],
]
MUST_NOT = [FALSE_OK, r"not in (the |any )?optimi[sz]er"]


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(10, 32), nn.Tanh(), nn.Linear(32, 32), nn.Tanh())
        self.fc = nn.Linear(32, 10)  # the pretrained 10-class head

    def forward(self, x):
        return self.fc(self.body(x))


def data():
    g = torch.Generator().manual_seed(1)
    x = torch.randn(64, 10, generator=g)
    return x, x[:, :5].argmax(1)


def pretrained():
    torch.manual_seed(0)
    return Net()


def step(watch):
    model = pretrained()
    model.fc = nn.Linear(model.fc.in_features, 5)  # new task: 5 classes
    for param in model.parameters():
        param.requires_grad = False
    model.fc.requires_grad = True  # an attribute of the module, not of its parameters
    optimizer = torch.optim.SGD(model.fc.parameters(), lr=0.1)
    x, y = data()
    before = [p.detach().clone() for p in model.parameters()]
    error = None
    try:
        with watch(model) as w:
            optimizer.zero_grad()
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            optimizer.step()
    except RuntimeError as e:
        error = e
    return Run(w=w, model=model, before=before, error=error)


def truth(run):
    assert run.model.fc.requires_grad is True  # the module attribute
    assert not run.model.fc.weight.requires_grad and not run.model.fc.bias.requires_grad
    assert run.error is not None and "does not require grad" in str(run.error)
    for p, b in zip(run.model.parameters(), run.before, strict=True):
        assert p.grad is None and torch.equal(p.detach(), b)
