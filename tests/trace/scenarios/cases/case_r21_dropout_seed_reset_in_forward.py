"""A model whose forward pass seeds the random generator before its dropout, as a course's
template does (``np.random.seed(1)`` inside ``forward_propagation_with_dropout``), here
``torch.manual_seed(1)`` inside ``forward``.  Every call then draws the same dropout mask: the
two training steps on two different batches drop exactly the same units at the same batch
positions, so dropout no longer samples subnetworks, it trains one fixed subnetwork per row.
The gradients are finite and nonzero; nothing raises.

Source: https://community.deeplearning.ai/t/course-2-week-1-programming-assignment-regularization/34916/4
("the template code that they gave us sets the random seed in the forward propagation with dropout
function. That means that we actually end up dropping exactly the same neurons in every
iteration, so what we have implemented here is not really dropout as it was intended"; "it seems
pretty important that we remove the setting of the random seed").  Adapted: the course's numpy
model as a torch module, ``Linear(10, 16)``, ``Tanh``, ``Dropout(0.5)``, ``Linear(16, 3)``, two
batches of 32, SGD at 0.1.
"""

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = (
    "https://community.deeplearning.ai/t/course-2-week-1-programming-assignment-regularization"
    "/34916/4"
)
DESCRIPTION = "torch.manual_seed inside forward before dropout: the same dropout mask every step"
ASK = []
MUST = [
    [
        r"seed\w*",
        r"same (dropout )?masks?",
        r"identical (dropout )?masks?",
        r"masks?[^\n]{0,60}(repeat|same|identical|fixed|does not change|never changes)",
        r"dropout[^\n]{0,80}(same|identical|fixed|determinis)",
    ],
]
MUST_NOT = [FALSE_OK, CLAIMS_NONFINITE]


class Net(nn.Module):
    def __init__(self, reseed):
        super().__init__()
        self.reseed = reseed
        self.fc1 = nn.Linear(10, 16)
        self.drop = nn.Dropout(0.5)
        self.fc2 = nn.Linear(16, 3)

    def forward(self, x):
        h = torch.tanh(self.fc1(x))
        if self.reseed:
            torch.manual_seed(1)  # the template's seed, inside the forward pass
        return self.fc2(self.drop(h))


def data():
    g = torch.Generator().manual_seed(1)
    x = torch.randn(64, 10, generator=g)
    return x, (x[:, :3] + 0.5 * x[:, 3:6]).argmax(1)


def step(watch, reseed=True):
    torch.manual_seed(0)
    model = Net(reseed)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = data()
    masks = []
    model.drop.register_forward_hook(lambda m, i, o: masks.append((o == 0) & (i[0] != 0)))
    grads = []
    with watch(model) as w:
        for batch in (slice(0, 32), slice(32, 64)):
            optimizer.zero_grad()
            loss = F.cross_entropy(model(x[batch]), y[batch])
            loss.backward()
            grads.append([p.grad.detach().clone() for p in model.parameters()])
            optimizer.step()
    return Run(w=w, model=model, reseed=reseed, masks=masks, grads=grads)


def truth(run):
    assert run.reseed
    first, second = run.masks
    assert bool(first.any()) and not bool(first.all())
    assert torch.equal(first, second)  # the same units dropped at both steps
    for grads in run.grads:
        for g in grads:
            assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0)
