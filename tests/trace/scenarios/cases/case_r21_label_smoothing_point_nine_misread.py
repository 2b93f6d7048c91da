"""``nn.CrossEntropyLoss(label_smoothing=0.9)`` written by someone who read "the correct class gets
a value a little below one, such as zero point nine" as the meaning of the argument.  torch's
``label_smoothing`` is the mass taken away from the true class and spread uniformly: the target is
``(1 - 0.9) * onehot + 0.9 / K``, so with 4 classes the true class gets 0.325 and each other class
0.225.  The step trains the classifier towards nearly uniform predictions (the loss is lowest
when it predicts 0.325 for the right class), a tenth of the label's signal.  Every gradient is
finite and nonzero; nothing raises.

Source: https://www.cruxible.dev/learn/ml2x-label-smoothing ("The correct class gets a value a
little below one, such as zero point nine"; "The remaining small mass is spread evenly across the
other classes"; "Too much smoothing, though, blurs the classes").  Adapted: a ``Linear(10, 16)``,
``Tanh``, ``Linear(16, 4)`` classifier, 64 examples, SGD at 0.1.
"""

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn

SOURCE = "https://www.cruxible.dev/learn/ml2x-label-smoothing"
DESCRIPTION = "label_smoothing=0.9 meant as 0.9 on the true class: targets 0.325 / 0.225"
ASK = []
MUST = [
    [r"smooth\w*"],
    [
        r"\b0?\.9\b",
        r"\b0?\.325\b",
        r"too (high|large|much|strong)",
        r"(near|almost|close to|nearly)[- ]?uniform",
        r"uniform",
    ],
]
MUST_NOT = [FALSE_OK, CLAIMS_NONFINITE, r"all[- ]zero"]


def data():
    g = torch.Generator().manual_seed(1)
    x = torch.randn(64, 10, generator=g)
    return x, x[:, :4].argmax(1)


def step(watch, smoothing=0.9):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(10, 16), nn.Tanh(), nn.Linear(16, 4))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    loss_fn = nn.CrossEntropyLoss(label_smoothing=smoothing)
    x, y = data()
    with watch(model) as w:
        optimizer.zero_grad()
        logits = model(x)
        logits.retain_grad()
        loss = loss_fn(logits, y)
        loss.backward()
        grads = [p.grad.detach().clone() for p in model.parameters()]
        optimizer.step()
    return Run(w=w, model=model, smoothing=smoothing, y=y, logits=logits.detach(),
               logit_grad=logits.grad.detach(), grads=grads)  # fmt: skip


def implied_targets(run):
    """The target distribution the loss trains towards: softmax(z) - N * dL/dz."""
    return run.logits.softmax(1) - len(run.y) * run.logit_grad


def truth(run):
    assert run.smoothing == 0.9
    targets = implied_targets(run)
    true_mass = targets.gather(1, run.y[:, None]).squeeze(1)
    assert torch.allclose(true_mass, torch.full_like(true_mass, 0.325), atol=1e-5)
    assert torch.allclose(targets.sum(1), torch.ones(len(run.y)), atol=1e-5)
    assert float(targets.max()) < 0.33  # nowhere near the 0.9 meant
    for g in run.grads:
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0)
