"""Control: a binary classifier whose model ends in ``nn.Sigmoid()``, trained with
``BCEWithLogitsLoss``, which applies the sigmoid again: the loss sees probabilities in (0, 1)
as logits, can never go below log(1 + e^-1) ~ 0.31 for a positive, and learns slowly.  It is a
modelling slip, not a gradient fault: every parameter gets a finite, nonzero gradient (as round
1's softmax-before-cross_entropy control).  A diagnosis may name the double sigmoid.

Source: http://www.philkr.net/cs342/doc/sigmoid/ ("BCEWithLogitsLoss combines the sigmoid layer
and the BCELoss in one single class"; "Note here that you don't need to pass the input tensor to
the sigmoid layer before training with BCEWithLogitsLoss").
"""

import torch
from scenario_kit import CLAIMS_NO_ZERO_GRAD, CLAIMS_NONFINITE, HEALTHY_OK, Run
from torch import nn

SOURCE = "http://www.philkr.net/cs342/doc/sigmoid/"
DESCRIPTION = "control: nn.Sigmoid output fed to BCEWithLogitsLoss; gradients finite, nonzero"
ASK = []
MUST = [
    [
        HEALTHY_OK,
        r"sigmoid[^\n]{0,60}(twice|again|already|before (the )?(loss|BCEWithLogits))",
        r"(twice|double)[^\n]{0,30}sigmoid",
    ]
]
MUST_NOT = [CLAIMS_NONFINITE, CLAIMS_NO_ZERO_GRAD, r"no gradient", r"\bdead\b", r"vanish"]


def step(watch):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(10, 16), nn.ReLU(), nn.Linear(16, 1), nn.Sigmoid())
    criterion = nn.BCEWithLogitsLoss()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    g = torch.Generator().manual_seed(1)
    x = torch.randn(64, 10, generator=g)
    y = (x[:, :1] > 0).float()
    with watch(model) as w:
        opt.zero_grad()
        probs = model(x)
        loss = criterion(probs, y)
        loss.backward()
        opt.step()
    return Run(w=w, model=model, probs=probs.detach(), loss=loss.detach())


def truth(run):
    assert bool(((run.probs > 0) & (run.probs < 1)).all())  # probabilities taken as logits
    floor = torch.nn.functional.softplus(torch.tensor(-1.0))  # log(1 + e^-1)
    assert float(run.loss) > float(floor)
    for p in run.model.parameters():
        assert p.grad is not None and bool(torch.isfinite(p.grad).all())
        assert bool(p.grad.abs().sum() > 0)
