"""A healthy step people suspect: a small U-Net (two resolutions, the encoder's feature map
concatenated with the upsampled decoder map before the last convolution) fit to one image and one
binary mask with ``nn.BCELoss`` on a sigmoid output, the "overfit a single example" check.  Every
parameter gets a finite, nonzero gradient; the first convolution gets it through both paths (the
skip concatenation and the bottleneck), each nonzero on its own; 60 further Adam steps bring the
loss below a quarter of its start: the model can overfit the example.

Source: https://thedebonair.co.uk/post/u-net-unable-to-overfit-single-training-example-loss
("U-Net Unable to Overfit Single Training Example - Loss Plateaus"; its loop: ``criterion =
nn.BCELoss()``, ``optimizer = optim.Adam(model.parameters(), lr=1e-3)``, one input image and one
random binary mask).  Adapted: a 16x16 image, tanh U-Net with 4 and 8 channels, the page's
placeholder ``class UNet`` written out.
"""

import torch
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK, Run
from torch import nn

SOURCE = "https://thedebonair.co.uk/post/u-net-unable-to-overfit-single-training-example-loss"
DESCRIPTION = "healthy: small U-Net with skip concatenation, BCELoss on sigmoid, one example"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    r"(skip|concat\w*)[^\n]{0,60}(no gradient|blocked|broken|detach)",
    r"no gradient",
    r"all-zero",
    r"vanish\w*",
]


class UNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.Conv2d(1, 4, 3, padding=1)
        self.down = nn.Conv2d(4, 8, 3, padding=1)
        self.up = nn.ConvTranspose2d(8, 4, 2, stride=2)
        self.final = nn.Conv2d(8, 1, 3, padding=1)
        self.cut = None  # "skip" or "bottleneck": detach that path (for the truth only)

    def forward(self, x):
        e = torch.tanh(self.enc(x))
        b = torch.tanh(self.down(nn.functional.avg_pool2d(e, 2)))
        u = torch.tanh(self.up(b))
        skip = e.detach() if self.cut == "skip" else e
        if self.cut == "bottleneck":
            u = u.detach()
        return torch.sigmoid(self.final(torch.cat([u, skip], dim=1)))


def example():
    g = torch.Generator().manual_seed(1)
    image = torch.randn(1, 1, 16, 16, generator=g)
    mask = torch.randint(0, 2, (1, 1, 16, 16), generator=g).float()
    return image, mask


def make_model():
    torch.manual_seed(0)
    return UNet()


def step(watch):
    model = make_model()
    criterion = nn.BCELoss()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    image, mask = example()
    with watch(model) as w:
        optimizer.zero_grad()
        loss = criterion(model(image), mask)
        loss.backward()
        grads = {n: p.grad.detach().clone() for n, p in model.named_parameters()}
        optimizer.step()
    for _ in range(60):  # the rest of the overfitting run, not watched
        optimizer.zero_grad()
        later = criterion(model(image), mask)
        later.backward()
        optimizer.step()
    paths = {}
    for cut in ("skip", "bottleneck"):
        probe = make_model()
        probe.cut = cut
        (paths[cut],) = torch.autograd.grad(criterion(probe(image), mask), [probe.enc.weight])
    return Run(
        w=w, loss=float(loss.detach()), later=float(later.detach()), grads=grads, paths=paths
    )


def truth(run):
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
    for cut, g in run.paths.items():  # each path alone reaches the first convolution
        assert bool(g.abs().sum() > 0), cut
    assert run.later < run.loss / 4
