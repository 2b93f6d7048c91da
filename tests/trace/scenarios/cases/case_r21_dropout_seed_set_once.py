"""Control: the same model and two steps with the random generator seeded once, at the start of
the script, and never inside ``forward``: each forward pass draws a new dropout mask, as dropout
intends, so the two steps drop different units.  Every gradient is finite and nonzero and every
parameter moves.

Source: https://laganvalleydup.co.uk/post/py-torch-dropout-behavior-same-seed-different-dropout
("PyTorch's dropout layer doesn't apply a fixed mask across multiple runs. Instead, it generates a
new random mask for each forward pass. This is done to prevent the network from learning to rely
on specific neurons being dropped"; ``torch.manual_seed(42)`` once, then two calls of the same
``nn.Dropout(p=0.5)``).  Adapted as the bug: ``Linear(10, 16)``, ``Tanh``, ``Dropout(0.5)``,
``Linear(16, 3)``, two batches of 32, SGD at 0.1.
"""

import torch
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://laganvalleydup.co.uk/post/py-torch-dropout-behavior-same-seed-different-dropout"
DESCRIPTION = "control: seed set once at the start, a new dropout mask at each step: healthy"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    r"all[- ]zero",
    r"\bzero grad\w*",
    r"\bdead\b",
    r"same (dropout )?masks?",
    r"manual_seed[^\n]{0,60}(forward|every|each)",
]


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(10, 16)
        self.drop = nn.Dropout(0.5)
        self.fc2 = nn.Linear(16, 3)

    def forward(self, x):
        return self.fc2(self.drop(torch.tanh(self.fc1(x))))


def data():
    g = torch.Generator().manual_seed(1)
    x = torch.randn(64, 10, generator=g)
    return x, (x[:, :3] + 0.5 * x[:, 3:6]).argmax(1)


def step(watch):
    torch.manual_seed(0)  # once, at the start
    model = Net()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = data()
    masks = []
    model.drop.register_forward_hook(lambda m, i, o: masks.append((o == 0) & (i[0] != 0)))
    grads, before = [], [p.detach().clone() for p in model.parameters()]
    with watch(model) as w:
        for batch in (slice(0, 32), slice(32, 64)):
            optimizer.zero_grad()
            loss = F.cross_entropy(model(x[batch]), y[batch])
            loss.backward()
            grads.append([p.grad.detach().clone() for p in model.parameters()])
            optimizer.step()
    return Run(w=w, model=model, masks=masks, grads=grads, before=before)


def truth(run):
    first, second = run.masks
    assert not torch.equal(first, second)  # a new mask at each step
    for grads in run.grads:
        for g in grads:
            assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0)
    for p, b in zip(run.model.parameters(), run.before, strict=True):
        assert not torch.equal(p.detach(), b)
