"""A healthy step that looks like a BatchNorm misuse: Ghost Batch Normalization, a batch of 64
split into four "ghost batches" of 16, each sent through the same ``BatchNorm1d`` on its own and
the results concatenated.  Each chunk is normalised with its own mean and variance and the running
statistics are updated four times in the step (``num_batches_tracked`` 4); that is the method (it
brings back the noise of small-batch statistics to a large-batch run), not a mistake.  Every
gradient is finite and nonzero and the loss falls after the step.

Source: https://docs.mosaicml.com/en/latest/api_reference/generated/composer.algorithms.GhostBatchNorm.html
("Replaces batch normalization modules with Ghost Batch Normalization modules that simulate the
effect of using a smaller batch size. Works by spliting input into chunks of ghost_batch_size
samples and running batch normalization on each chunk separately").  Adapted: ``Linear(12, 32)``,
the ghost ``BatchNorm1d(32)`` with ghost batches of 16, ``Tanh``, ``Linear(32, 3)``, 64
examples, Adam at 1e-3.
"""

import torch
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = (
    "https://docs.mosaicml.com/en/latest/api_reference/generated/"
    "composer.algorithms.GhostBatchNorm.html"
)
DESCRIPTION = "healthy: ghost batch norm, 4 chunks of 16 normalised separately by design"
ASK = []
MUST = [[HEALTHY_OK, r"ghost", r"virtual batch"]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    r"\bdead\b",
    r"all[- ]zero",
    r"^summary: (?!ok\b)[^\n]*(batch ?norm|\bbn\b|ghost|chunk)",
]


class GhostBatchNorm1d(nn.Module):
    def __init__(self, features, ghost_batch_size):
        super().__init__()
        self.ghost_batch_size = ghost_batch_size
        self.bn = nn.BatchNorm1d(features)

    def forward(self, x):
        if not self.training:
            return self.bn(x)
        return torch.cat([self.bn(chunk) for chunk in x.split(self.ghost_batch_size)])


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(12, 32)
        self.gbn = GhostBatchNorm1d(32, 16)
        self.head = nn.Linear(32, 3)

    def forward(self, x):
        return self.head(torch.tanh(self.gbn(self.fc(x))))


def data():
    g = torch.Generator().manual_seed(1)
    x = torch.randn(64, 12, generator=g)
    return x, (x[:, :3] + x[:, 3:6] * x[:, 6:9]).argmax(1)


def step(watch):
    torch.manual_seed(0)
    model = Net()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    x, y = data()
    with watch(model) as w:
        optimizer.zero_grad()
        normed = model.gbn(model.fc(x))
        loss = F.cross_entropy(model.head(torch.tanh(normed)), y)
        loss.backward()
        grads = {n: p.grad.detach().clone() for n, p in model.named_parameters()}
        optimizer.step()
    tracked = int(model.gbn.bn.num_batches_tracked)
    with torch.no_grad():
        after = F.cross_entropy(model(x), y).item()  # the same ghost batches, in training mode
    return Run(
        w=w, tracked=tracked, normed=normed.detach(), grads=grads, loss=loss.item(), after=after
    )


def truth(run):
    assert run.tracked == 4  # one update per ghost batch
    for chunk in run.normed.split(16):
        assert float(chunk.mean(0).abs().max()) < 1e-5  # each ghost batch centred on itself
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
    assert run.after < run.loss
