"""The control of ``multilabel_softmax_then_bce``: the same multi-label classifier and multi-hot
targets with ``nn.BCEWithLogitsLoss`` on the raw logits, a sigmoid per tag inside the loss.  Each
tag is its own yes-or-no decision; the gradient with respect to a logit is ``(sigmoid(z) - y) /
(N * C)``, every tag can reach its target, and every parameter gets a finite, nonzero gradient.

Source: https://codemia.io/knowledge-hub/path/cost_and_activation_functions_for_multiple_independent_labels
("For independent labels, the standard activation is sigmoid on each output unit"; "If you prefer
to output logits instead of probabilities, remove the sigmoid and set from_logits=True"; "Why
Softmax Is Usually Wrong Here").  Adapted: the bug's ``Linear(10, 16)``, ``Tanh``, ``Linear(16,
5)`` classifier, 128 examples, SGD at 0.5; torch's ``BCEWithLogitsLoss`` for Keras'
``from_logits=True``.
"""

import torch
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK, Run
from torch import nn

SOURCE = (
    "https://codemia.io/knowledge-hub/path/"
    "cost_and_activation_functions_for_multiple_independent_labels"
)
DESCRIPTION = "control: multi-label tags, BCEWithLogitsLoss on raw logits: a sigmoid per tag"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    r"all[- ]zero",
    r"\bzero grad\w*",
    r"\bdead\b",
    r"softmax",
]


def data():
    g = torch.Generator().manual_seed(1)
    x = torch.randn(128, 10, generator=g)
    mix = torch.randn(10, 5, generator=g) / 10**0.5
    return x, (x @ mix > 0.3).float()


def step(watch):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(10, 16), nn.Tanh(), nn.Linear(16, 5))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.5)
    x, y = data()
    with watch(model) as w:
        optimizer.zero_grad()
        logits = model(x)
        logits.retain_grad()
        loss = nn.BCEWithLogitsLoss()(logits, y)
        loss.backward()
        grads = [p.grad.detach().clone() for p in model.parameters()]
        optimizer.step()
    return Run(w=w, model=model, y=y, logits=logits.detach(), logit_grad=logits.grad.detach(),
               loss=loss.item(), grads=grads)  # fmt: skip


def truth(run):
    expected = (torch.sigmoid(run.logits) - run.y) / run.y.numel()
    assert torch.allclose(run.logit_grad, expected, atol=1e-7)  # one sigmoid per tag
    assert float(run.logit_grad.sum(1).abs().max()) > 1e-4  # the tags do not compete
    for g in run.grads:
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0)
