"""A language-model head whose logits are masked by adding a mask of -inf: for the positions to
be ignored the whole row was masked with -inf and their target set to -1 with
``ignore_index=-1``.  The loss is finite (those rows are ignored), but log_softmax of a row of
-inf is NaN and its backward sends NaN into the logits' gradient: every parameter below gets a
NaN gradient, made in the loss, and the step turns the weights to NaN.

Source: https://jkschin.com/blog/2023/cross-entropy-loss-ignore-index/ ("I also masked out all
the irrelevant tokens with -inf that are not included in the ground truth and also set their
relevant class to -1 and set ignore_index = -1"; "the loss was a reasonable float value on the
first step, but became nan in the second step"; "from the third column onwards, mask with 0").
"""

import torch
from scenario_kit import FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://jkschin.com/blog/2023/cross-entropy-loss-ignore-index/"
DESCRIPTION = "rows of -inf mask with ignore_index targets: finite loss, NaN gradient from the loss"
ASK = ["2.weight"]
MUST = [
    [r"\bnan\b", r"non-?finite"],
    [
        r"-inf",
        r"\binf\b",
        r"mask",
        r"ignore",
        r"\bloss\b",
        r"cross_?entropy",
        r"log_?softmax",
        r"after the model",
        r"outside",
    ],
]
MUST_NOT = [
    FALSE_OK,
    (
        r"(made|produced|created|introduced|originat\w*|starts?|first)\W+(\w+\W+){0,3}"
        r"(in|by|at)\s+(module\s+)?'[012]'"
    ),
]

NEG = float("-inf")


def masks(zero_rows=False):
    keep = torch.tensor([[0.0, 0.0, NEG, NEG, NEG, NEG]] * 2)
    rest = torch.zeros(3, 6) if zero_rows else torch.full((3, 6), NEG)
    return torch.cat([keep, rest])


def step(watch, zero_rows=False):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 16), nn.Tanh(), nn.Linear(16, 6))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    g = torch.Generator().manual_seed(1)
    x = torch.randn(5, 8, generator=g)
    target = torch.tensor([0, 1, -1, -1, -1])
    mask = masks(zero_rows)
    state0 = {k: v.clone() for k, v in model.state_dict().items()}
    with watch(model) as w:
        opt.zero_grad()
        logits = model(x)
        loss = F.cross_entropy(logits + mask, target, ignore_index=-1)
        loss.backward()
        grads = {n: p.grad.clone() for n, p in model.named_parameters()}
        opt.step()
    return Run(
        w=w, model=model, loss=loss.detach(), grads=grads, state0=state0, batch=(x, target, mask)
    )


def logits_grad(run):
    """The gradient arriving at the logits, recomputed on the weights before the step."""
    ref = nn.Sequential(nn.Linear(8, 16), nn.Tanh(), nn.Linear(16, 6))
    ref.load_state_dict(run.state0)
    x, target, mask = run.batch
    logits = ref(x).detach().requires_grad_()
    F.cross_entropy(logits + mask, target, ignore_index=-1).backward()
    return logits.grad


def truth(run):
    assert bool(torch.isfinite(run.loss))
    rows_nan = torch.isnan(logits_grad(run)).any(1)
    assert rows_nan.tolist() == [False, False, True, True, True]  # made in the loss
    for n, gr in run.grads.items():
        assert bool(torch.isnan(gr).any()), n
    assert bool(torch.isnan(run.model[2].weight).any())
