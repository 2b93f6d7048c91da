"""A FiLM layer applied as ``gamma * h + beta`` with ``gamma`` and ``beta`` of shape ``(N, C)``
from the FiLM generator and convolutional features ``h`` of shape ``(N, C, H, W)``, without
reshaping them to ``(N, C, 1, 1)``.  With a batch of 32, 32 channels and 32 x 32 feature maps
(CIFAR-sized inputs) broadcasting aligns ``(N, C)`` with the trailing ``(H, W)`` and nothing
raises: ``gamma[i, j]`` scales row ``i``, column ``j`` of every channel of every example.  The
modulation is no longer per channel and per example; example 0's output depends on the
conditioning of all 32 examples of the batch.  Every gradient is finite and nonzero.

Source: https://tmlr-beyond-pdf.org/assets/html/I5jhQ7uEPP/figure2.html ("In a fully-connected
network, FiLM applies a different affine transformation to each feature"; "In a convolutional
network, FiLM applies a different affine transformation to each channel, consistent across spatial
locations").  Adapted: a ``Conv2d(3, 32, 3, padding=1)`` on 32 x 32 images, a FiLM generator
``Linear(8, 64)`` on an ``Embedding(4, 8)`` of a task id, tanh, global average pooling and a
``Linear(32, 10)`` head; 32 examples, Adam at 1e-3.
"""

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://tmlr-beyond-pdf.org/assets/html/I5jhQ7uEPP/figure2.html"
DESCRIPTION = "FiLM gamma/beta (N, C) times features (N, C, H, W): broadcast over (H, W) silently"
ASK = []
MUST = [
    [
        r"broadcast\w*",
        r"unsqueez\w*",
        r"\[:, ?:, ?None, ?None\]",
        r"\.view\(",
        r"reshap\w*",
        r"\(N, ?C, ?1, ?1\)",
        r"(spatial|trailing) (dim\w*|axes|positions)",
    ],
    [r"gamma", r"beta", r"FiLM", r"modulat\w*", r"condition\w*"],
]
MUST_NOT = [
    FALSE_OK,
    CLAIMS_NONFINITE,
    r"\bdead\b",
    r"\braised\b|RuntimeError|exception",
    r"requires_grad\s*(=|is|was)?\s*False",
]


class FiLMNet(nn.Module):
    def __init__(self, per_channel):
        super().__init__()
        self.per_channel = per_channel
        self.conv = nn.Conv2d(3, 32, 3, padding=1)
        self.task = nn.Embedding(4, 8)
        self.film = nn.Linear(8, 64)
        self.head = nn.Linear(32, 10)

    def forward(self, images, cond):
        h = self.conv(images)
        gamma, beta = self.film(cond).chunk(2, dim=1)  # (N, 32) each
        if self.per_channel:
            gamma, beta = gamma[:, :, None, None], beta[:, :, None, None]
        h = torch.tanh(gamma * h + beta)
        return self.head(h.mean((2, 3)))


def data():
    g = torch.Generator().manual_seed(1)
    images = torch.randn(32, 3, 32, 32, generator=g)
    tasks = torch.randint(0, 4, (32,), generator=g)
    labels = (images.mean((2, 3)).argmax(1) * 3 + tasks) % 10
    return images, tasks, labels


def step(watch, per_channel=False):
    torch.manual_seed(0)
    model = FiLMNet(per_channel)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    images, tasks, labels = data()
    with watch(model) as w:
        optimizer.zero_grad()
        loss = F.cross_entropy(model(images, model.task(tasks)), labels)
        loss.backward()
        grads = {n: p.grad.detach().clone() for n, p in model.named_parameters()}
        optimizer.step()
    # after the step: how example 0's logits depend on every example's conditioning vector
    cond = model.task(tasks).detach().requires_grad_(True)
    (cross,) = torch.autograd.grad(model(images, cond)[0].sum(), cond)
    return Run(w=w, grads=grads, cross=cross)


def truth(run):
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
    assert bool((run.cross[1:].abs().sum(1) > 0).all())  # every other example reaches example 0
