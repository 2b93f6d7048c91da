"""The control of ``pixelshuffle_conv_channels_not_r_squared_raises``: the same sub-pixel network
with the last convolution outputting ``C * r**2 = 9`` channels, initialised with ICNR: one
``C``-channel kernel drawn at random and repeated for the ``r**2`` sub-pixel positions, so that at
initialisation the pixel shuffle equals a nearest-neighbour upsampling (every 3 x 3 block of the
output is constant: no checkerboard).  The step is healthy: the forward runs, every parameter gets a
finite, nonzero gradient (the nine copies get different ones, from different output pixels) and
moves.

Source: https://fdocuments.in/document/c-h-e-c-k-e-r-b-o-a-r-d-a-r-ti-fa-c-t-fr-e-e-s-u-b-p-i-x-e-l-c-c-h-e-c-k-e-r-b.html
(Aitken et al., "Checkerboard artifact free sub-pixel convolution": "Odena et al. highlight three
sources of checkerboard artifacts: deconvolution overlap, random initialization and loss
functions").  Adapted: the bug's network, data and optimizer with 9 output channels and the ICNR
initialisation the note proposes.
"""

import torch
from case_r27_pixelshuffle_conv_channels_not_r_squared_raises import R, SubPixelNet, data
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK, Run
from torch.nn import functional as F

SOURCE = (
    "https://fdocuments.in/document/"
    "c-h-e-c-k-e-r-b-o-a-r-d-a-r-ti-fa-c-t-fr-e-e-s-u-b-p-i-x-e-l-c-c-h-e-c-k-e-r-b.html"
)
DESCRIPTION = "control: conv outputs C*r^2 = 9 channels, ICNR init, PixelShuffle(3) trains"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    r"all[- ]zero",
    r"\bzero grad\w*",
    r"\bdead\b",
    r"vanish\w*",
    r"explod\w*",
]


def icnr_(conv):
    """One kernel per output channel, repeated for the r**2 sub-pixel positions."""
    out_c = conv.out_channels // R**2
    with torch.no_grad():
        base = torch.empty(out_c, *conv.weight.shape[1:])
        torch.nn.init.kaiming_uniform_(base, a=5**0.5)
        conv.weight.copy_(base.repeat_interleave(R**2, dim=0))
        conv.bias.copy_(torch.zeros(out_c).uniform_(-0.1, 0.1).repeat_interleave(R**2))


def step(watch):
    torch.manual_seed(0)
    model = SubPixelNet(1 * R**2)
    icnr_(model.last)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    lr, hr = data()
    with torch.no_grad():
        first = model(lr)
    with watch(model) as w:
        optimizer.zero_grad()
        loss = F.mse_loss(model(lr), hr)
        loss.backward()
        grads = {n: p.grad.detach().clone() for n, p in model.named_parameters()}
        optimizer.step()
    return Run(w=w, first=first, grads=grads, loss=float(loss.detach()))


def truth(run):
    # at initialisation each r x r block is constant: nearest-neighbour upsampling
    blocks = run.first.unfold(2, R, R).unfold(3, R, R)
    assert torch.allclose(blocks, blocks[..., :1, :1].expand_as(blocks))
    assert run.first.shape[-1] == 24
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
    sub = run.grads["last.weight"].view(1, R**2, -1)
    assert not torch.allclose(sub[:, 0], sub[:, 1])  # the copies get different gradients
