"""The control of ``sobel_edge_loss_kernel_trainable``: the same restoration model and edge-aware
loss with the two Sobel kernels registered as a buffer and applied with ``F.conv2d``: they are
saved with the model but are not parameters, so the optimizer never sees them and they stay the
Sobel kernels.  Every parameter of the restoration network gets a finite, nonzero gradient.

Source: http://medialab.di.unipi.it/web/IUM/Rendering/advanced97/notes/node172.html ("The Sobel
filter consists of two kernels which detect horizontal and vertical changes in an image. If both
are applied to an image, the results can by used to compute the magnitude and direction of the
edges in the image"; "The 3x3 Sobel kernels are:").  Adapted: the bug's ``Conv2d(1, 8, 3)``,
``Tanh``, ``Conv2d(8, 1, 3)`` model and loss, the kernels in ``register_buffer("sobel", ...)``,
16 blurred blocky 16 x 16 images, Adam at 1e-3.
"""

import torch
from case_r23_sobel_edge_loss_kernel_trainable import SOBEL
from case_r23_sobel_edge_loss_kernel_trainable import step as _step
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = "http://medialab.di.unipi.it/web/IUM/Rendering/advanced97/notes/node172.html"
DESCRIPTION = "control: Sobel kernels as a buffer applied with F.conv2d: fixed, not optimised"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    r"all[- ]zero",
    r"\bzero grad\w*",
    r"\bdead\b",
    r"requires_grad\s*(=|is|was)?\s*False",
]


def step(watch):
    return _step(watch, trainable_sobel=False)


def truth(run):
    assert set(run.grads) == {"net.0.weight", "net.0.bias", "net.2.weight", "net.2.bias"}
    assert torch.equal(run.model.sobel, SOBEL)
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
