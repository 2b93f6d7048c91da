"""Control: the same binary classifier trained the way the page recommends, its raw outputs (logits)
passed to ``nn.BCEWithLogitsLoss``, which applies the sigmoid inside with the log-sum-exp trick. The
loss equals ``BCELoss`` on ``sigmoid(logits)`` (asserted at these moderate logits), and every
parameter gets a finite, nonzero gradient and moves.

Source: https://runebook.dev/en/docs/pytorch/generated/torch.nn.functional.logsigmoid ("a more
common and often more stable approach for binary classification is to use
torch.nn.functional.binary_cross_entropy_with_logits or torch.nn.BCEWithLogitsLoss. This function
combines a sigmoid layer and the BCE loss in one step"). Adapted: a tanh MLP over 12 features, SGD
at 0.1.
"""

import torch
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK, Run
from torch import nn

SOURCE = "https://runebook.dev/en/docs/pytorch/generated/torch.nn.functional.logsigmoid"
DESCRIPTION = "control: raw logits to BCEWithLogitsLoss: healthy"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [CLAIMS_NONFINITE, CLAIMS_ERROR, r"logsigmoid"]


def step(watch):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(12, 16), nn.Tanh(), nn.Linear(16, 1))
    g = torch.Generator().manual_seed(1)
    x = torch.randn(32, 12, generator=g)
    targets = (x[:, 0] > 0).float().unsqueeze(1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    loss_fn = nn.BCEWithLogitsLoss()
    before = [p.detach().clone() for p in model.parameters()]
    error = None
    with watch(model) as w:
        optimizer.zero_grad()
        logits = model(x)
        loss = loss_fn(logits, targets)
        loss.backward()
        grads = [p.grad.detach().clone() for p in model.parameters()]
        optimizer.step()
    return Run(w=w, model=model, error=error, before=before, logits=logits.detach(),
               targets=targets, loss=loss.item(), grads=grads)  # fmt: skip


def truth(run):
    assert run.error is None
    plain = nn.BCELoss()(torch.sigmoid(run.logits), run.targets).item()
    assert abs(run.loss - plain) < 1e-5
    for g, b, p in zip(run.grads, run.before, run.model.parameters(), strict=True):
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0)
        assert not torch.equal(p.detach(), b)
