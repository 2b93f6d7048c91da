"""A classifier whose last layer is a plain ``Linear`` fed straight to ``F.nll_loss``: NLL expects
log-probabilities, so the "loss" is minus the mean raw score of the true class.  It is negative
after a step or two and has no lower bound; the gradients are finite and nonzero, and training
pushes the scores up without end instead of fitting the classes.

Source: https://codestudyblog.com/8ten8/80409021901.html ("The problem that Loss is negative in
the process of Pytorch training Network Model"; the loop computes ``loss = F.nll_loss(output,
target.squeeze())`` on the model's ``output``).
"""

import torch
from scenario_kit import FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://codestudyblog.com/8ten8/80409021901.html"
DESCRIPTION = "F.nll_loss on raw Linear outputs (no log_softmax): loss negative, unbounded"
ASK = []
MUST = [
    [
        r"log_?softmax",
        r"log-?probabilit",
        r"negative (loss|value)",
        r"loss[^\n]{0,40}(is |was |went |goes )?(negative|below zero|< ?0)",
        r"unbounded",
        r"(no|without) (lower )?bound",
    ]
]
MUST_NOT = [FALSE_OK]


def step(watch):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Linear(32, 4))
    opt = torch.optim.SGD(model.parameters(), lr=0.5)
    g = torch.Generator().manual_seed(1)
    batches = [
        (torch.randn(16, 10, generator=g), torch.randint(0, 4, (16, 1), generator=g))
        for _ in range(2)
    ]
    losses = []
    with watch(model) as w:
        for data, target in batches:
            opt.zero_grad()
            output = model(data)
            loss = F.nll_loss(output, target.squeeze())
            loss.backward()
            losses.append(loss.item())
            opt.step()
    return Run(w=w, model=model, losses=losses, output=output.detach())


def truth(run):
    assert run.losses[-1] < 0  # a negative "negative log-likelihood"
    assert not torch.allclose(run.output.logsumexp(1), torch.zeros(16))  # not log-probabilities
    for p in run.model.parameters():
        assert p.grad is not None and bool(torch.isfinite(p.grad).all())
        assert bool(p.grad.abs().sum() > 0)
