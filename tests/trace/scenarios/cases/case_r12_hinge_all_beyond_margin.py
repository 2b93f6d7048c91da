"""A linear SVM trained with the hinge loss ``clamp(1 - y * f(x), min=0).mean()`` (no L2 term) on a
separable batch, watched on its next epoch over the same batch after a warm-up (unwatched) that
brought every example beyond the margin: ``y * f(x) >= 1`` for all 64 examples.  Every clamp
sits on its flat side, the loss is exactly 0 and ``fc.weight`` and ``fc.bias`` get exactly
all-zero gradients; ``optimizer.step()`` moves nothing.  Nothing is broken in autograd: the hinge
stops caring once the margin is met; the classifier has nothing left to learn from this batch.

Source: https://machinelearningreference-raw.pages.dev/01-Statistical-(machine)-learning-(data-science)/20-Tasks/01-Classification/Loss-functions-for-classification/05-Hinge-loss,-aka-support-vector-machine-(SVM)-loss
("Such a loss is zero in 'easy' cases (those classified beyond the margin).  As such, the gradient
of the loss is zeroed out for all of these cases as well").
"""

import torch
from scenario_kit import CLAIMS_NONFINITE, Run
from torch import nn

SOURCE = (
    "https://machinelearningreference-raw.pages.dev/"
    "01-Statistical-(machine)-learning-(data-science)/20-Tasks/01-Classification/"
    "Loss-functions-for-classification/05-Hinge-loss,-aka-support-vector-machine-(SVM)-loss"
)
DESCRIPTION = "hinge loss, every example beyond the margin: loss 0, all-zero gradient (expected)"
ASK = ["fc.weight"]
MUST = [
    [
        r"(all-zero|zero) gradient",
        r"gradient[^\n]{0,30}\b(is |was |are |were )?(all |exactly )?(zero|0)\b",
        r"did not move",
    ],
    [
        r"margin",
        r"hinge",
        r"clamp",
        r"\bmax\(0",
        r"loss (is |was )?(exactly )?(0|zero)\b",
        r"zero loss",
        r"loss of 0\b",
    ],
]
MUST_NOT = [
    r"^summary: (gradients )?ok[^\n]*nonzero",
    CLAIMS_NONFINITE,
    r"no_grad",
    r"detach",
    r"dead (units?|relu|neurons?)",
    r"not in (the |any )?optimizer",
]


class LinearSVM(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(2, 1)

    def forward(self, x):
        return self.fc(x).squeeze(-1)


def hinge(out, y):
    return torch.clamp(1 - y * out, min=0).mean()


def step(watch, warm_up: bool = True):
    torch.manual_seed(0)
    model = LinearSVM()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    g = torch.Generator().manual_seed(1)
    y = torch.randint(0, 2, (64,), generator=g).float() * 2 - 1
    x = y[:, None] * 1.5 + 0.4 * torch.randn(64, 2, generator=g)
    epochs = 0
    while warm_up and hinge(model(x), y).item() > 0 and epochs < 500:  # earlier epochs
        opt.zero_grad()
        hinge(model(x), y).backward()
        opt.step()
        epochs += 1
    with torch.no_grad():
        margins = y * model(x)
    before = [p.detach().clone() for p in model.parameters()]
    with watch(model) as w:
        opt.zero_grad()
        loss = hinge(model(x), y)
        loss.backward()
        opt.step()
    grads = {n: p.grad.detach().clone() for n, p in model.named_parameters()}
    moved = any(
        not torch.equal(p.detach(), b) for p, b in zip(model.parameters(), before, strict=True)
    )
    return Run(w=w, loss=loss.item(), margins=margins, grads=grads, moved=moved, epochs=epochs)


def truth(run):
    assert bool((run.margins >= 1).all())  # every example beyond the margin
    assert run.loss == 0.0
    for n, gr in run.grads.items():
        assert bool((gr == 0).all()), n
    assert not run.moved
