"""A binary classifier whose log-probabilities, ``F.logsigmoid(logits)``, are passed to
``nn.BCELoss``, which expects probabilities in [0, 1]. ``logsigmoid`` is never positive (here every
value is below 0), and ``BCELoss`` raises "all elements of input should be between 0 and 1" in the
forward, before any backward: no parameter gets a gradient and the step moves nothing.

Source: https://runebook.dev/en/docs/pytorch/generated/torch.nn.functional.logsigmoid ("A frequent
mistake is using logsigmoid with the wrong loss function ... Using it with something like Binary
Cross-Entropy Loss (torch.nn.BCELoss) will lead to incorrect results. BCELoss expects raw
probability values"; the incorrect example: "log_probs = F.logsigmoid(inputs)", "loss_fn =
nn.BCELoss()", "loss = loss_fn(log_probs, targets)"; "The log values will be negative, causing
unexpected behavior and errors"). Adapted: the page's example on a tanh MLP over 12 features, SGD at
0.1.
"""

import torch
from scenario_kit import FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://runebook.dev/en/docs/pytorch/generated/torch.nn.functional.logsigmoid"
DESCRIPTION = "logsigmoid outputs passed to nn.BCELoss: raises (input not in [0, 1])"
ASK = []
MUST = [
    [r"\braised\b", r"RuntimeError", r"exception", r"\berror\b"],
    [
        r"logsigmoid",
        r"between 0 and 1",
        r"BCELoss",
        r"binary_cross_entropy",
        r"log[- ]?probabilit",
        r"negative (input|value|probabilit)",
    ],
]
MUST_NOT = [FALSE_OK]


def step(watch):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(12, 16), nn.Tanh(), nn.Linear(16, 1))
    g = torch.Generator().manual_seed(1)
    x = torch.randn(32, 12, generator=g)
    targets = (x[:, 0] > 0).float().unsqueeze(1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    loss_fn = nn.BCELoss()
    before = [p.detach().clone() for p in model.parameters()]
    error, log_probs = None, None
    try:
        with watch(model) as w:
            optimizer.zero_grad()
            log_probs = F.logsigmoid(model(x))
            loss = loss_fn(log_probs, targets)
            loss.backward()
            optimizer.step()
    except RuntimeError as e:
        error = e
    return Run(w=w, model=model, error=error, before=before, log_probs=log_probs)


def truth(run):
    assert run.error is not None and "between 0 and 1" in str(run.error)
    assert bool((run.log_probs < 0).all())  # log-probabilities, not probabilities
    for p, b in zip(run.model.parameters(), run.before, strict=True):
        assert p.grad is None and torch.equal(p.detach(), b)
