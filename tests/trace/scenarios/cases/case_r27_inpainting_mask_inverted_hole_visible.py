"""An inpainting step written for masks with 1 on known pixels (``x_corrupt = x * m``, hole loss
weighted by ``1 - m``) and fed mask files that mark the hole with 1.  The "corrupted" input then
keeps the hole's true pixels and blanks everything else, the hole term (weight 6) is taken over the
known region that the network is not shown, and the valid term (weight 1) over the hole, whose
pixels are in the input: the network is trained to copy the hole from its input and to invent the
rest of the image.  Every gradient is finite and nonzero; nothing raises.

Source: https://shahaliyev.org/csci4701/advanced/inpainting_losses/ ("A value of m=1 indicates a
known pixel, meaning that the original image value is visible and available to the model. A value
of m=0 indicates a missing pixel"; "The corrupted input is x_corrupt = x (.) m").  Adapted: 24 smooth
random 3 x 16 x 16 images, one 6 x 6 hole each (the mask file: 1 in the hole); a ``Conv2d(4, 16,
3)``, ``ELU``, ``Conv2d(16, 16, 3)``, ``ELU``, ``Conv2d(16, 3, 3)`` network (padding 1) fed the
corrupted image and the mask; the loss ``6 * hole L1 + valid L1`` with ``mean(|f1 - f2| * mask)``
as in RFR-Inpainting; Adam at 1e-3.
"""

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://shahaliyev.org/csci4701/advanced/inpainting_losses/"
DESCRIPTION = "inpainting mask 1 = hole used as 1 = known: the hole is shown, the rest is trained"
ASK = []
MUST = [
    [
        r"mask[^\n]{0,80}(invert\w*|revers\w*|flipped|swapped|convention|1 ?- ?m|opposite)",
        r"(invert\w*|revers\w*|flipped|swapped|opposite)[^\n]{0,40}mask",
        r"hole[^\n]{0,80}(visible|in the input|given|shown|leak\w*|known)",
        r"(target|ground truth)[^\n]{0,60}(in|into|visible in) the input",
        r"leak\w*",
    ]
]
MUST_NOT = [FALSE_OK, CLAIMS_NONFINITE, r"\bdead\b", r"requires_grad\s*(=|is|was)?\s*False"]
HOLE_WEIGHT, VALID_WEIGHT = 6.0, 1.0


def data():
    g = torch.Generator().manual_seed(1)
    images = F.avg_pool2d(torch.randn(24, 3, 20, 20, generator=g), 5, stride=1) * 2
    hole = torch.zeros(24, 1, 16, 16)
    corners = torch.randint(0, 10, (24, 2), generator=g)
    for i, (r, c) in enumerate(corners.tolist()):
        hole[i, :, r : r + 6, c : c + 6] = 1.0
    return images, hole


def l1(f1, f2, mask):
    return torch.mean(torch.abs(f1 - f2) * mask)


def step(watch, invert_file_mask=False):
    torch.manual_seed(0)
    model = nn.Sequential(
        nn.Conv2d(4, 16, 3, padding=1),
        nn.ELU(),
        nn.Conv2d(16, 16, 3, padding=1),
        nn.ELU(),
        nn.Conv2d(16, 3, 3, padding=1),
    )
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    images, hole = data()
    m = 1 - hole if invert_file_mask else hole  # the step expects 1 = known
    corrupt = images * m
    with watch(model) as w:
        optimizer.zero_grad()
        out = model(torch.cat([corrupt, m], 1))
        loss = HOLE_WEIGHT * l1(out, images, 1 - m) + VALID_WEIGHT * l1(out, images, m)
        loss.backward()
        grads = {n: p.grad.detach().clone() for n, p in model.named_parameters()}
        optimizer.step()
    return Run(w=w, images=images, hole=hole, corrupt=corrupt, m=m, grads=grads)


def truth(run):
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
    hole = run.hole.expand_as(run.images).bool()
    assert 0.1 < float(run.hole.mean()) < 0.2
    # the hole's true pixels are in the input, the known region is blanked
    assert torch.equal(run.corrupt[hole], run.images[hole])
    assert bool((run.corrupt[~hole] == 0).all())
    # the weight-6 term covers the pixels the network is not shown
    assert torch.equal((1 - run.m).bool().expand_as(hole), ~hole)
