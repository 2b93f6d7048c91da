"""An edge-aware image loss whose Sobel filter is an ``nn.Conv2d`` inside the model, its weight set
to the two 3 x 3 Sobel kernels at construction but left a trainable parameter.  The optimizer is
built from ``model.parameters()``, so the "fixed" kernels get a gradient (from the edges of both
the output and the target) and the first step changes them: from then on the edge term compares
whatever the filter has become, and it can shrink the term by shrinking the filter.  Every
gradient is finite and nonzero; nothing raises.

Source: https://melbeteg.com/go/melbeteg/r/aHR0cHM6Ly9naXRodWIuY29tL3VzbWFud2FyZGFnL3NvYmVs
("The code currently computes convolution of an image with a fixed kernel to find a gradient. By
extending the logic to two gradients along x and y axes, and computing the square root of the
squared sums, Sobel filter can be implemented.").  Adapted: the two Sobel kernels as a
``Conv2d(1, 2, 3, bias=False)`` attribute ``edges`` of a ``Conv2d(1, 8, 3)``, ``Tanh``,
``Conv2d(8, 1, 3)`` restoration model, the loss ``mse + 0.5 * L1(edges(out), edges(target))``,
16 blurred blocky 16 x 16 images, Adam at 1e-3.
"""

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://melbeteg.com/go/melbeteg/r/aHR0cHM6Ly9naXRodWIuY29tL3VzbWFud2FyZGFnL3NvYmVs"
DESCRIPTION = "Sobel edge loss as a trainable Conv2d in the model: the 'fixed' kernels are trained"
ASK = ["edges.weight"]
MUST = [
    [r"sobel", r"edges?\.weight"],
    [
        r"requires_grad",
        r"buffer",
        r"(should|meant to|supposed to) be (fixed|frozen|constant)",
        r"fixed (kernel|filter)",
        r"(kernel|filter|sobel|edges?\.weight)[^\n]*(trained|updated|moved|changed|learn\w*)",
    ],
]
MUST_NOT = [FALSE_OK, CLAIMS_NONFINITE, r"all[- ]zero", r"\bzero grad\w*"]
SOBEL = torch.tensor(
    [[[[-1.0, 0.0, 1.0], [-2.0, 0.0, 2.0], [-1.0, 0.0, 1.0]]],
     [[[-1.0, -2.0, -1.0], [0.0, 0.0, 0.0], [1.0, 2.0, 1.0]]]]
)  # fmt: skip


class Restorer(nn.Module):
    def __init__(self, trainable_sobel=True):
        super().__init__()
        self.net = nn.Sequential(
            nn.Conv2d(1, 8, 3, padding=1), nn.Tanh(), nn.Conv2d(8, 1, 3, padding=1)
        )
        if trainable_sobel:
            self.edges = nn.Conv2d(1, 2, 3, padding=1, bias=False)
            with torch.no_grad():
                self.edges.weight.copy_(SOBEL)
        else:
            self.register_buffer("sobel", SOBEL.clone())

    def edge_map(self, img):
        if hasattr(self, "edges"):
            return self.edges(img)
        return F.conv2d(img, self.sobel, padding=1)

    def forward(self, x):
        return self.net(x)


def data():
    g = torch.Generator().manual_seed(1)
    clean = F.interpolate(torch.rand(16, 1, 4, 4, generator=g), scale_factor=4, mode="nearest")
    blurred = F.avg_pool2d(clean, 3, stride=1, padding=1, count_include_pad=False)
    return blurred + 0.05 * torch.randn(clean.shape, generator=g), clean


def step(watch, trainable_sobel=True):
    torch.manual_seed(0)
    model = Restorer(trainable_sobel)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    x, target = data()
    with watch(model) as w:
        optimizer.zero_grad()
        out = model(x)
        loss = F.mse_loss(out, target) + 0.5 * F.l1_loss(
            model.edge_map(out), model.edge_map(target)
        )
        loss.backward()
        grads = {n: p.grad.detach().clone() for n, p in model.named_parameters()}
        optimizer.step()
    return Run(w=w, model=model, grads=grads)


def truth(run):
    assert "edges.weight" in run.grads and bool(run.grads["edges.weight"].abs().sum() > 0)
    assert not torch.equal(run.model.edges.weight.detach(), SOBEL)  # no longer a Sobel filter
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
