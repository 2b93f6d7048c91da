"""Control: the same classifier with ``nn.CrossEntropyLoss(label_smoothing=0.1)``, the usual value:
the target gives ``0.9 + 0.1 / 4 = 0.925`` to the true class and 0.025 to each other class.  The
step is ordinary: every gradient is finite and nonzero and every parameter moves.

Source: https://crackedaicode.com/problems/label-smoothing ("Label smoothing replaces hard one-hot
targets with soft targets to prevent overconfidence: y_i' = (1 - epsilon) * y_i + epsilon / K").
Adapted as the bug: ``Linear(10, 16)``, ``Tanh``, ``Linear(16, 4)``, 64 examples, SGD at 0.1.
"""

import torch
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK, Run
from torch import nn

SOURCE = "https://crackedaicode.com/problems/label-smoothing"
DESCRIPTION = "control: label_smoothing=0.1, true class target 0.925: healthy"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    r"all[- ]zero",
    r"\bzero grad\w*",
    r"\bdead\b",
    r"smooth\w*[^\n]{0,60}too (high|large|much|strong)",
]


def data():
    g = torch.Generator().manual_seed(1)
    x = torch.randn(64, 10, generator=g)
    return x, x[:, :4].argmax(1)


def step(watch):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(10, 16), nn.Tanh(), nn.Linear(16, 4))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    loss_fn = nn.CrossEntropyLoss(label_smoothing=0.1)
    x, y = data()
    before = [p.detach().clone() for p in model.parameters()]
    with watch(model) as w:
        optimizer.zero_grad()
        logits = model(x)
        logits.retain_grad()
        loss = loss_fn(logits, y)
        loss.backward()
        grads = [p.grad.detach().clone() for p in model.parameters()]
        optimizer.step()
    return Run(w=w, model=model, y=y, logits=logits.detach(), logit_grad=logits.grad.detach(),
               grads=grads, before=before)  # fmt: skip


def truth(run):
    targets = run.logits.softmax(1) - len(run.y) * run.logit_grad
    true_mass = targets.gather(1, run.y[:, None]).squeeze(1)
    assert torch.allclose(true_mass, torch.full_like(true_mass, 0.925), atol=1e-5)
    for g, b, p in zip(run.grads, run.before, run.model.parameters(), strict=True):
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0)
        assert not torch.equal(p.detach(), b)
