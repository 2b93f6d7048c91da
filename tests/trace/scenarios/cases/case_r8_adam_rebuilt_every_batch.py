"""Alternating training of two halves of a network: at every batch one half is frozen with
``requires_grad_(False)``, the other unfrozen, and a new ``Adam`` is built over the parameters
that now require grad.  Each step is therefore the first step of a fresh Adam: its moment
estimates are the current gradient alone, so every entry moves by ``lr * g / (|g| + eps)``, about
``lr`` whatever the gradient's size, and the averages a persistent Adam keeps are thrown away at
every batch (the half trained at batch 0 is at its first step again at batch 2).

Source: https://github.com/qsimeon/gans-alternate-layer-freezing (``training_loop.py``,
``train_alternating_batch``: "# Alternate between halves at each batch", "# Create optimizer for
current trainable parameters", ``optimizer = optim.Adam(trainable_params, lr=learning_rate)``
inside the batch loop).  Batch 0 runs before the watch, batches 1 and 2 inside it.
"""

import torch
from scenario_kit import FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://github.com/qsimeon/gans-alternate-layer-freezing"
DESCRIPTION = "Adam built anew every batch (alternating freeze): each step a first Adam step"
ASK = []
MUST = [
    [
        r"new optimizer",
        r"(optimizer|Adam)[^\n]{0,60}(created|built|made|constructed) (anew|again|each|every|per)",
        r"(re-?created|re-?built)[^\n]{0,40}(each|every|per) (step|batch|iteration)",
        r"(state|moments?|averages?)[^\n]{0,40}(reset|empty|lost|fresh|discarded|thrown away)",
        r"first (Adam |optimizer )?step (again|of a (new|fresh))",
        r"step (count|counter)[^\n]{0,30}\b1\b",
    ],
]
MUST_NOT = [FALSE_OK]

LR = 1e-3


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(20, 32)
        self.fc2 = nn.Linear(32, 32)
        self.fc3 = nn.Linear(32, 32)
        self.fc4 = nn.Linear(32, 10)
        self.first_half = [self.fc1, self.fc2]
        self.second_half = [self.fc3, self.fc4]

    def forward(self, x):
        h = F.relu(self.fc2(F.relu(self.fc1(x))))
        return self.fc4(F.relu(self.fc3(h)))

    def train_half(self, first: bool):
        for layer in self.first_half:
            layer.requires_grad_(first)
        for layer in self.second_half:
            layer.requires_grad_(not first)


def step(watch, persistent: bool = False):
    torch.manual_seed(0)
    model = Net()
    g = torch.Generator().manual_seed(1)
    batches = [(torch.randn(32, 20, generator=g), torch.randint(0, 10, (32,), generator=g))]
    batches += [(torch.randn(32, 20, generator=g), torch.randint(0, 10, (32,), generator=g))]
    batches += [(torch.randn(32, 20, generator=g), torch.randint(0, 10, (32,), generator=g))]
    shared = torch.optim.Adam(model.parameters(), lr=LR) if persistent else None
    record = []

    def batch(i):
        model.train_half(first=(i % 2 == 0))
        if persistent:
            optimizer = shared
        else:  # as in train_alternating_batch
            trainable = [p for p in model.parameters() if p.requires_grad]
            optimizer = torch.optim.Adam(trainable, lr=LR)
        x, y = batches[i]
        before = {n: p.detach().clone() for n, p in model.named_parameters()}
        optimizer.zero_grad()
        F.cross_entropy(model(x), y).backward()
        grads = {n: None if p.grad is None else p.grad.clone() for n, p in model.named_parameters()}
        optimizer.step()
        after = {n: p.detach().clone() for n, p in model.named_parameters()}
        steps = {
            n: int(optimizer.state[p]["step"]) if p in optimizer.state else 0
            for n, p in model.named_parameters()
        }
        record.append({"before": before, "after": after, "grads": grads, "steps": steps})

    batch(0)
    with watch(model) as w:
        batch(1)
        batch(2)
    return Run(w=w, record=record)


def truth(run):
    last = run.record[2]  # batch 2 trains the first half again
    assert last["steps"]["fc1.weight"] == 1  # a fresh Adam: its first step, once more
    g = last["grads"]["fc1.weight"]
    delta = (last["after"]["fc1.weight"] - last["before"]["fc1.weight"]).abs()
    big = g.abs() > 1e-5
    # a first Adam step moves every entry by lr * |g| / (|g| + eps): lr, whatever |g| is
    assert torch.allclose(delta[big], torch.full_like(delta[big], LR), rtol=2e-2)
    for n in ("fc3.weight", "fc4.weight"):  # the frozen half does not move
        assert torch.equal(last["before"][n], last["after"][n]), n
