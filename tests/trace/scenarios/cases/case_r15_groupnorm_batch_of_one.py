"""A healthy step people suspect: a small convolutional classifier that uses ``GroupNorm(2, 8)``
instead of ``BatchNorm2d`` because the batch is one image.  GroupNorm takes its statistics per
sample (over each group's 4 channels and the 8x8 positions), so a batch of one is normalised as
any other: the forward is finite, every parameter gets a finite, nonzero gradient, and an image's
output is the same alone or inside a batch of four (with ``BatchNorm2d`` in train mode it is not,
checked for comparison); the gradient of a batch's summed loss is the sum of the single-image
gradients.

Source: https://unseel.com/cs/group-normalization.html ("Normalize per sample, not per batch — so
a batch of one trains just as well as a batch of 256"; "computes the same statistics whether the
batch holds 32 images or one").  Adapted: Conv2d, GroupNorm, Tanh, average pooling and a linear
head, SGD.
"""

import torch
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://unseel.com/cs/group-normalization.html"
DESCRIPTION = "healthy: GroupNorm(2, 8) conv net trained on a batch of one image"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    r"(batch|batch size) (of )?(one|1)\b[^\n]{0,60}(undefined|cannot|can't|invalid|unreliable)",
    r"zero variance",
    r"no gradient",
    r"all-zero",
]


class Net(nn.Module):
    def __init__(self, norm="group"):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.norm = nn.GroupNorm(2, 8) if norm == "group" else nn.BatchNorm2d(8)
        self.head = nn.Linear(8, 4)

    def forward(self, x):
        h = torch.tanh(self.norm(self.conv(x)))
        return self.head(h.mean((2, 3)))


def make_model(norm="group"):
    torch.manual_seed(0)
    return Net(norm).train()


def images():
    g = torch.Generator().manual_seed(1)
    return torch.randn(4, 3, 8, 8, generator=g), torch.tensor([2, 0, 3, 1])


def step(watch):
    model = make_model()
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    x, y = images()
    with watch(model) as w:
        opt.zero_grad()
        logits = model(x[:1])
        loss = F.cross_entropy(logits, y[:1])
        loss.backward()
        grads = {n: p.grad.detach().clone() for n, p in model.named_parameters()}
        opt.step()
    ref = make_model()
    alone = [ref(x[i : i + 1]) for i in range(4)]
    together = ref(x)
    singles = [
        torch.autograd.grad(F.cross_entropy(a, y[i : i + 1]), list(ref.parameters()))
        for i, a in enumerate(alone)
    ]
    batch = torch.autograd.grad(
        F.cross_entropy(together, y, reduction="sum"), list(ref.parameters())
    )
    bn = make_model("batch")
    bn_alone, bn_together = bn(x[:1]), bn(x)
    return Run(
        w=w,
        logits=logits.detach(),
        grads=grads,
        alone=torch.cat(alone).detach(),
        together=together.detach(),
        singles=singles,
        batch=batch,
        bn_gap=float((bn_alone - bn_together[:1]).abs().max().detach()),
    )


def truth(run):
    assert bool(torch.isfinite(run.logits).all())
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
    assert torch.allclose(run.alone, run.together, atol=1e-5)  # per-sample statistics
    for i, b in enumerate(run.batch):
        assert torch.allclose(b, sum(s[i] for s in run.singles), atol=1e-5)
    assert run.bn_gap > 1e-2  # BatchNorm's output depends on the rest of the batch
