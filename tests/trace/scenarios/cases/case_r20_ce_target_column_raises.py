"""Class labels loaded as a column, shape ``(N, 1)``, passed to ``nn.CrossEntropyLoss`` with logits
of shape ``(N, C)``.  For class-index targets the loss wants a 1-D target of shape ``(N,)``; a 2-D
integer target raises ``RuntimeError: 0D or 1D target tensor expected, multi-target not supported``
in the forward of the loss.  No backward runs: every ``.grad`` stays ``None`` and nothing moves.

Source: https://taourl.com/read-2244767.html ("Incorrect usage: mismatched ranks"; "target_2d =
torch.randint(0, 5, (3, 1)) # explicit 2D shape"; "# loss_fn(output_2d, target_2d) # Raises
error: \\"1D target tensor expected, multi-target not supported"; "nn.CrossEntropyLoss expects the
target to be a 1D tensor for classification tasks").  Adapted: a ``Linear(8, 16)``, ``Tanh``,
``Linear(16, 5)`` classifier on 32 examples whose labels come as a ``(32, 1)`` column (as read from
one column of a table), SGD at 0.1.
"""

import torch
from scenario_kit import FALSE_OK, Run
from torch import nn

SOURCE = "https://taourl.com/read-2244767.html"
DESCRIPTION = "CrossEntropyLoss with class targets of shape (N, 1): raises (multi-target)"
ASK = []
MUST = [
    [r"\braised\b", r"RuntimeError", r"exception", r"\berror\b"],
    [
        r"multi-?target",
        r"1D target",
        r"\((32|N), ?1\)",
        r"\[(32|N), ?1\]",
        r"target[^\n]{0,80}(shape|dimension|2-?D|column|rank)",
        r"squeeze",
    ],
]
MUST_NOT = [FALSE_OK]


def data():
    g = torch.Generator().manual_seed(1)
    x = torch.randn(32, 8, generator=g)
    labels = x[:, :5].argmax(1, keepdim=True)  # a (32, 1) column of class indices
    return x, labels


def step(watch, squeeze=False):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 16), nn.Tanh(), nn.Linear(16, 5))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    loss_fn = nn.CrossEntropyLoss()
    x, labels = data()
    target = labels.squeeze(1) if squeeze else labels
    before = [p.detach().clone() for p in model.parameters()]
    error, loss = None, None
    try:
        with watch(model) as w:
            optimizer.zero_grad()
            loss = loss_fn(model(x), target)
            loss.backward()
            optimizer.step()
    except RuntimeError as e:
        error = e
    return Run(w=w, model=model, target=target, before=before, error=error, loss=loss)


def truth(run):
    assert run.target.shape == (32, 1)
    assert run.error is not None and "multi-target not supported" in str(run.error)
    for p, b in zip(run.model.parameters(), run.before, strict=True):
        assert p.grad is None and torch.equal(p.detach(), b)
