"""A healthy step that looks suspicious: a SiamFC-style tracker whose response map is the
cross-correlation of the search region with the template's features used as the convolution
kernel, ``F.conv2d(x.view(1, B * C, H, W), z, groups=B)``.  The kernel is an activation, not a
parameter, and the template branch never appears in a loss of its own; but ``conv2d`` is
differentiable in its weight argument, so the shared backbone gets gradient through both the search
branch and the template branch, the output scale and bias get theirs, and every parameter gets a
finite, nonzero gradient and moves.

Source: https://pure.ecnu.edu.cn/en/publications/learning-bi-grained-cross-correlation-siamese-networks-for-visual/
("Siamese network based trackers measure the similarity between a target template and a search
region by computing their cross-correlation. Specifically, Siamese trackers regard the target
template as a spatial filter to convolve the search region").  Adapted: a shared backbone
``Conv2d(3, 16, 3), ELU, Conv2d(16, 16, 3)`` (no padding), 8 smooth random 31 x 31 search images
with 15 x 15 templates cropped from them at random offsets, the 17 x 17 response scaled by a
``Conv2d(1, 1, 1)`` started at 1e-3 (SiamFC's output scale), a balanced logistic loss with positives
within 2 cells of the true offset, SGD at 0.01 with momentum 0.9.
"""

import torch
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = (
    "https://pure.ecnu.edu.cn/en/publications/"
    "learning-bi-grained-cross-correlation-siamese-networks-for-visual/"
)
DESCRIPTION = "healthy: SiamFC cross-correlation with template features as conv kernel (groups=B)"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    r"all[- ]zero",
    r"\bzero grad\w*",
    r"\bdead\b",
    r"no gradient",
    r"detach\w*",
    r"vanish\w*",
]
B = 8


class SiamFC(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Sequential(nn.Conv2d(3, 16, 3), nn.ELU(), nn.Conv2d(16, 16, 3))
        self.adjust = nn.Conv2d(1, 1, 1)
        with torch.no_grad():
            self.adjust.weight.fill_(1e-3)
            self.adjust.bias.zero_()

    def forward(self, template, search):
        z, x = self.backbone(template), self.backbone(search)
        b, c, h, w = x.shape
        response = F.conv2d(x.reshape(1, b * c, h, w), z, groups=b)
        return self.adjust(response.view(b, 1, *response.shape[-2:])), z


def data():
    g = torch.Generator().manual_seed(1)
    search = F.avg_pool2d(torch.randn(B, 3, 35, 35, generator=g), 5, stride=1)  # 31 x 31
    offsets = torch.randint(0, 17, (B, 2), generator=g)
    template = torch.stack(
        [search[i, :, r : r + 15, c : c + 15] for i, (r, c) in enumerate(offsets.tolist())]
    )
    rows, cols = torch.meshgrid(torch.arange(17), torch.arange(17), indexing="ij")
    dist = (rows[None] - offsets[:, 0, None, None]) ** 2 + (
        cols[None] - offsets[:, 1, None, None]
    ) ** 2
    labels = (dist <= 4).float()[:, None]
    return template, search, labels


def step(watch):
    torch.manual_seed(0)
    model = SiamFC()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    template, search, labels = data()
    pos = labels.sum()
    weight = torch.where(labels > 0, 0.5 / pos, 0.5 / (labels.numel() - pos))
    before = {n: p.detach().clone() for n, p in model.named_parameters()}
    with watch(model) as w:
        optimizer.zero_grad()
        response, z = model(template, search)
        z.retain_grad()
        loss = F.binary_cross_entropy_with_logits(response, labels, weight=weight, reduction="sum")
        loss.backward()
        grads = {n: p.grad.detach().clone() for n, p in model.named_parameters()}
        z_grad = z.grad.detach().clone()
        optimizer.step()
    return Run(w=w, model=model, before=before, grads=grads, z_grad=z_grad, shape=response.shape)


def truth(run):
    assert tuple(run.shape) == (B, 1, 17, 17)
    assert bool(torch.isfinite(run.z_grad).all()) and bool(run.z_grad.abs().sum() > 0)
    for n, p in run.model.named_parameters():
        g = run.grads[n]
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
        assert not torch.equal(p.detach(), run.before[n]), n
