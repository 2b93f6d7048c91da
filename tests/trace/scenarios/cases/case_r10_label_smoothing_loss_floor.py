"""Control: the page's example: ``nn.Linear(3, 3)`` on three samples, ``CrossEntropyLoss(
label_smoothing=0.1)``, SGD at 0.1, five epochs.  The loss goes down but can never reach 0: with
smoothing the target is a distribution and the smallest possible loss is its entropy (about 0.29
for 3 classes at 0.1).  A healthy step whose loss plateaus above zero.

Source: https://leyaa.ai/codefly/learn/pytorch/part-2/pytorch-label-smoothing ("This code trains a
simple model on 3 samples with 3 classes using label smoothing of 0.1").
"""

import math

import torch
from scenario_kit import CLAIMS_NONFINITE, HEALTHY_OK, Run
from torch import nn

SOURCE = "https://leyaa.ai/codefly/learn/pytorch/part-2/pytorch-label-smoothing"
DESCRIPTION = (
    "control: CrossEntropyLoss(label_smoothing=0.1), 3 samples, SGD 5 epochs; loss floor > 0"
)
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [CLAIMS_NONFINITE, r"\bdead\b", r"vanish", r"all-zero"]


def step(watch):
    torch.manual_seed(0)
    inputs = torch.tensor([[1.0, 2.0, 3.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]])
    labels = torch.tensor([2, 0, 1])
    model = nn.Linear(3, 3)
    criterion = nn.CrossEntropyLoss(label_smoothing=0.1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    losses = []
    with watch(model) as w:
        for _ in range(5):
            optimizer.zero_grad()
            loss = criterion(model(inputs), labels)
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
    return Run(w=w, losses=losses)


def truth(run):
    on, off = 1 - 0.1 + 0.1 / 3, 0.1 / 3
    floor = -(on * math.log(on) + 2 * off * math.log(off))
    assert all(b < a for a, b in zip(run.losses, run.losses[1:], strict=False))
    assert min(run.losses) > floor > 0.25
