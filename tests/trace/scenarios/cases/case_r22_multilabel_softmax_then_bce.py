"""A multi-label classifier (5 tags, an example carries about two of them) whose outputs go through
``torch.softmax`` before ``nn.BCELoss`` against multi-hot targets.  The softmax makes the 5
probabilities of an example sum to 1, so the tags compete: an example with ``k`` positive tags can
give them at most ``1/k`` each on average, and the loss has a floor above zero that no weights can
go below (``sum_j -log p_j >= k log k`` over the positives).  Raising all 5 logits together changes
nothing: the gradient with respect to each example's logits sums to zero.  Every gradient is finite
and nonzero; nothing raises.

Source: https://kaggle.curtischong.me/problem-type/Multi-label-Classification ("Since each x can
belong to more than one correct label, you want to apply a sigmoid to each individual class,
rather than a Softmax over all classes"; "softmax will only allow one label to have a high
probability of being chosen").  Adapted: a ``Linear(10, 16)``, ``Tanh``, ``Linear(16, 5)``
classifier on 128 examples whose tags are thresholded projections of the features, SGD at 0.5.
"""

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn

SOURCE = "https://kaggle.curtischong.me/problem-type/Multi-label-Classification"
DESCRIPTION = "multi-label tags: softmax then BCELoss, tags compete, loss floor above zero"
ASK = []
MUST = [
    [r"softmax"],
    [
        r"multi[- ]?label",
        r"multi[- ]?hot",
        r"sigmoid",
        r"sums? to (1|one)",
        r"mutually exclusive",
        r"compet\w*",
        r"several (positive )?(labels|tags|classes)",
    ],
]
MUST_NOT = [FALSE_OK, CLAIMS_NONFINITE, r"all[- ]zero"]


def data():
    g = torch.Generator().manual_seed(1)
    x = torch.randn(128, 10, generator=g)
    mix = torch.randn(10, 5, generator=g) / 10**0.5
    return x, (x @ mix > 0.3).float()  # multi-hot: each tag on or off


def step(watch):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(10, 16), nn.Tanh(), nn.Linear(16, 5))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.5)
    x, y = data()
    with watch(model) as w:
        optimizer.zero_grad()
        logits = model(x)
        logits.retain_grad()
        loss = nn.BCELoss()(torch.softmax(logits, dim=1), y)
        loss.backward()
        grads = [p.grad.detach().clone() for p in model.parameters()]
        optimizer.step()
    return Run(w=w, model=model, y=y, logits=logits.detach(), logit_grad=logits.grad.detach(),
               loss=loss.item(), grads=grads)  # fmt: skip


def truth(run):
    k = run.y.sum(1)
    assert float((k >= 2).float().mean()) > 0.3  # many examples carry several tags
    probs = run.logits.softmax(1)
    assert torch.allclose(probs.sum(1), torch.ones(len(k)), atol=1e-5)
    # per-example logit gradients sum to zero: only the logits' differences are trained
    assert float(run.logit_grad.sum(1).abs().max()) < 1e-7
    assert float(run.logit_grad.abs().max()) > 1e-5
    # the floor: positives' -log p sum to at least k log k, so the mean BCE is at least this
    floor = float((k.clamp(min=1) * k.clamp(min=1).log()).sum() / run.y.numel())
    assert floor > 0.1 and run.loss >= floor
    for g in run.grads:
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0)
