"""A small RAFT optical-flow model that builds its all-pairs correlation volume under
``torch.no_grad()`` (it is only looked up afterwards, so keeping its graph looked like a waste of
memory).  The correlation volume is the only way the feature encoder ``fnet`` reaches the loss: the
update operator reads the volume at the current flow, and without a graph its lookups are constants.
``fnet``'s parameters get no gradient (``.grad`` None) while the context encoder and the recurrent
update operator train, so the features the matching rests on never learn.  Nothing raises; every
gradient present is finite and nonzero.

Source: https://jipengsun.github.io/knowledge/articles/raft.html ("Given two consecutive RGB
images, I_1 and I_2, RAFT uses a Convolutional Neural Network (CNN), denoted as g_theta, to extract
dense feature maps"; "Additionally, a separate context network extracts a context map C and a hidden
state h_0 from I_1 to guide the iterative updates later"; "RAFT calculates the visual similarity
between every single pixel in F_1 and every single pixel in F_2. The similarity is calculated using
the dot product of their feature vectors").  Adapted: 16 x 16 image pairs whose second frame is the
first shifted by one pixel to the right (plus noise), features at half resolution from ``Conv(3, 16,
stride 2)``, SiLU, ``Conv(16, 16)``, the volume scaled by ``1 / sqrt(16)`` and looked up with
``grid_sample`` in a 3 x 3 window (one level, no pyramid), a convolutional recurrent update (``tanh``
state, a flow head) for 4 iterations with the flow detached at each, as RAFT; the sequence loss with
``gamma = 0.8``; Adam at 1e-3.
"""

import math

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://jipengsun.github.io/knowledge/articles/raft.html"
DESCRIPTION = "RAFT correlation volume built under no_grad: the feature encoder gets no gradient"
ASK = ["fnet.0.weight"]
MUST = [
    [
        r"no_grad",
        r"(without|no) (a )?graph",
        r"grad(ient)? (mode )?disabled",
        r"correlation[^\n]{0,60}detach\w*|detach\w*[^\n]{0,60}correlation",
    ],
    [r"correlation", r"\bcorr\b|corr_?volume|cost volume", r"all[- ]pairs"],
]
MUST_NOT = [FALSE_OK, CLAIMS_NONFINITE, r"\bdead\b", r"requires_grad\s*(=|is|was)?\s*False"]
CH, ITERS, GAMMA = 16, 4, 0.8


def encoder():
    return nn.Sequential(
        nn.Conv2d(3, CH, 3, stride=2, padding=1), nn.SiLU(), nn.Conv2d(CH, CH, 3, padding=1)
    )


class RAFT(nn.Module):
    def __init__(self, corr_grad):
        super().__init__()
        self.corr_grad = corr_grad
        self.fnet, self.cnet = encoder(), encoder()
        self.gru = nn.Conv2d(CH + 9 + 2 + CH, CH, 3, padding=1)
        self.flow_head = nn.Conv2d(CH, 2, 3, padding=1)

    def correlation(self, f1, f2):
        b, c, h, w = f1.shape
        corr = torch.einsum("bchw,bcuv->bhwuv", f1, f2) / math.sqrt(c)
        return corr.reshape(b * h * w, 1, h, w)

    def lookup(self, corr, coords):  # a 3 x 3 window around each pixel's current match
        b, _, h, w = coords.shape
        offsets = torch.stack(
            torch.meshgrid(torch.arange(-1, 2), torch.arange(-1, 2), indexing="xy")
        )
        window = coords.permute(0, 2, 3, 1)[..., None, None, :] + offsets.permute(1, 2, 0).float()
        scale = torch.tensor([2 / (w - 1), 2 / (h - 1)])
        grid = (window * scale - 1).reshape(b * h * w, 3, 3, 2)
        sampled = F.grid_sample(corr, grid, align_corners=True)  # (b h w, 1, 3, 3)
        return sampled.view(b, h, w, 9).permute(0, 3, 1, 2)

    def forward(self, image1, image2):
        if self.corr_grad:
            corr = self.correlation(self.fnet(image1), self.fnet(image2))
        else:
            with torch.no_grad():  # "only looked up": no graph kept
                corr = self.correlation(self.fnet(image1), self.fnet(image2))
        context = self.cnet(image1)
        hidden, context = torch.tanh(context), F.silu(context)
        b, _, h, w = context.shape
        xs, ys = torch.meshgrid(torch.arange(w).float(), torch.arange(h).float(), indexing="xy")
        coords0 = torch.stack([xs, ys])[None].expand(b, -1, -1, -1)
        coords1, flows = coords0.clone(), []
        for _ in range(ITERS):
            coords1 = coords1.detach()  # RAFT stops the gradient through the flow estimate
            flow = coords1 - coords0
            features = torch.cat([hidden, self.lookup(corr, coords1), flow, context], 1)
            hidden = torch.tanh(self.gru(features))
            coords1 = coords1 + self.flow_head(hidden)
            flows.append(coords1 - coords0)
        return flows


def data():
    g = torch.Generator().manual_seed(1)
    image1 = torch.randn(4, 3, 16, 16, generator=g)
    image2 = torch.roll(image1, 1, dims=-1) + 0.05 * torch.randn(4, 3, 16, 16, generator=g)
    target = torch.zeros(4, 2, 8, 8)
    target[:, 0] = 0.5  # one pixel at full resolution is half a pixel at the features'
    return image1, image2, target


def step(watch, corr_grad=False):
    torch.manual_seed(0)
    model = RAFT(corr_grad)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    image1, image2, target = data()
    with watch(model) as w:
        optimizer.zero_grad()
        flows = model(image1, image2)
        loss = sum(
            GAMMA ** (ITERS - i - 1) * (flow - target).abs().mean() for i, flow in enumerate(flows)
        )
        loss.backward()
        grads = {n: None if p.grad is None else p.grad.detach().clone()
                 for n, p in model.named_parameters()}  # fmt: skip
        optimizer.step()
    return Run(w=w, grads=grads, loss=float(loss.detach()))


def truth(run):
    assert math.isfinite(run.loss)
    for n, g in run.grads.items():
        if n.startswith("fnet."):
            assert g is None, n
        else:
            assert g is not None and bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
