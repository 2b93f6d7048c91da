"""A healthy step with intended zero gradients: class-conditional batch normalization, whose scale
and shift are rows of two ``nn.Embedding(10, 32)`` tables (started at 1 and 0) picked by the class
label, on a batch of 8 examples.  At most 8 of the 10 classes can appear in the batch: the rows of
the classes that do not (here at least two) take no part in the forward and get exactly-zero
gradients, and Adam leaves them where they are; every other gradient is finite and nonzero.

Source: https://paperswithcode.com/method/conditional-batch-normalization ("Conditional Batch
Normalization (CBN) is a class-conditional variant of batch normalization. The key idea is to
predict the gamma and beta of the batch normalization from an embedding"; "CBN has also been used
in GANs to allow class information to affect the batch normalization parameters").  Adapted: a
class-conditional regressor ``Linear(8, 32)``, ``BatchNorm1d(32, affine=False)``, the class's
gamma and beta, ``Tanh``, ``Linear(32, 1)``, labels drawn from the 10 classes, Adam at 1e-3.
"""

import torch
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://paperswithcode.com/method/conditional-batch-normalization"
DESCRIPTION = (
    "healthy: conditional BN, batch of 8 of 10 classes: absent classes' rows get zero grad"
)
ASK = []
MUST = [
    [
        HEALTHY_OK,
        r"absent",
        r"not (present )?in (the|this) batch",
        r"class(es)?[^\n]{0,40}(not|absent|missing|unused)",
        r"unused",
        r"condition\w*",
    ]
]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    r"\bdead\b",
    r"requires_grad\s*(=|is|was)?\s*False",
    r"not in (the |any )?optimi[sz]er",
]


class ConditionalBN(nn.Module):
    def __init__(self, features, classes):
        super().__init__()
        self.bn = nn.BatchNorm1d(features, affine=False)
        self.gamma = nn.Embedding(classes, features)
        self.beta = nn.Embedding(classes, features)
        nn.init.ones_(self.gamma.weight)
        nn.init.zeros_(self.beta.weight)

    def forward(self, h, y):
        return self.gamma(y) * self.bn(h) + self.beta(y)


class Regressor(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 32)
        self.cbn = ConditionalBN(32, 10)
        self.head = nn.Linear(32, 1)

    def forward(self, x, y):
        return self.head(torch.tanh(self.cbn(self.fc(x), y)))


def data():
    g = torch.Generator().manual_seed(1)
    x = torch.randn(8, 8, generator=g)
    y = torch.randint(0, 10, (8,), generator=g)
    target = x[:, :1] * (y[:, None].float() - 4.5) / 4.5
    return x, y, target


def step(watch):
    torch.manual_seed(0)
    model = Regressor()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    x, y, target = data()
    before = {n: p.detach().clone() for n, p in model.named_parameters()}
    with watch(model) as w:
        optimizer.zero_grad()
        F.mse_loss(model(x, y), target).backward()
        grads = {n: p.grad.detach().clone() for n, p in model.named_parameters()}
        optimizer.step()
    after = {n: p.detach().clone() for n, p in model.named_parameters()}
    return Run(w=w, y=y, grads=grads, before=before, after=after)


def truth(run):
    present = torch.zeros(10, dtype=torch.bool)
    present[run.y] = True
    assert int((~present).sum()) >= 2
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
    for table in ("cbn.gamma.weight", "cbn.beta.weight"):
        g = run.grads[table]
        assert bool((g[~present] == 0).all()) and bool((g[present].abs().sum(1) > 0).all())
        assert torch.equal(run.after[table][~present], run.before[table][~present])
