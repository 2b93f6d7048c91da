"""A healthy step people suspect: a small convolutional classifier with ``BatchNorm2d`` trained in
``train()`` mode on a batch of one 8x8 image.  ``BatchNorm1d`` refuses a batch of one (one value
per channel: ``ValueError: Expected more than 1 value per channel when training``, checked here
for comparison), but ``BatchNorm2d`` takes each channel's statistics over ``N * H * W = 64``
values, so the normalisation is defined, the forward is finite and every parameter, the
BatchNorm's ``weight`` and ``bias`` included, gets a finite, nonzero gradient.

Source: https://codemia.io/knowledge-hub/path/batch_normalization_when_batch_size1 ("In PyTorch,
BatchNorm1d in training mode will fail on input shaped like 1 x C because there is only one value
per channel.  BatchNorm2d can still work on 1 x C x H x W if the spatial dimensions provide enough
samples").  Adapted: Conv2d, BatchNorm2d, Tanh, average pooling and a linear head, SGD.
"""

import torch
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK, Run, expect_raise
from torch import nn
from torch.nn import functional as F

SOURCE = "https://codemia.io/knowledge-hub/path/batch_normalization_when_batch_size1"
DESCRIPTION = "healthy: BatchNorm2d in train mode on a batch of one 8x8 image: stats over 64 values"
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
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.bn = nn.BatchNorm2d(8)
        self.head = nn.Linear(8, 4)

    def forward(self, x):
        h = torch.tanh(self.bn(self.conv(x)))
        return self.head(h.mean((2, 3)))


def step(watch):
    torch.manual_seed(0)
    model = Net().train()
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    g = torch.Generator().manual_seed(1)
    x = torch.randn(1, 3, 8, 8, generator=g)
    y = torch.tensor([2])
    with watch(model) as w:
        opt.zero_grad()
        logits = model(x)
        loss = F.cross_entropy(logits, y)
        loss.backward()
        opt.step()
    grads = {n: p.grad.detach().clone() for n, p in model.named_parameters()}
    bn1d_error = expect_raise(lambda: nn.BatchNorm1d(8).train()(torch.randn(1, 8)), ValueError)
    return Run(w=w, logits=logits.detach(), grads=grads, bn1d_error=bn1d_error)


def truth(run):
    assert run.bn1d_error is not None  # the 1-d case does raise
    assert bool(torch.isfinite(run.logits).all())
    for n, gr in run.grads.items():
        assert bool(torch.isfinite(gr).all()) and bool(gr.abs().sum() > 0), n
