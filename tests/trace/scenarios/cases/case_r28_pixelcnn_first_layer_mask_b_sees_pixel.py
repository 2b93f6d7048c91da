"""A PixelCNN whose first masked convolution uses mask B (the centre of the kernel kept) where mask
A belongs.  The first layer reads the pixel it is about to predict, at every position: the model's
prediction for pixel (4, 4) depends on the value of pixel (4, 4) itself, and the likelihood can be
driven down by copying the input.  The gradients are all finite and nonzero; nothing raises; the
model does not depend on later pixels.

Source: https://qeeebo.com/questions/wha/d7/a9f/what-is-a-masked-convolution-in-pixel-recurrent-neural-networks
("A Masked Convolution is a type of convolution that masks certain pixels to ensure the model is
conditional only on pixels already visited"; "The masking of pixels also helps to prevent the model
from relying on future pixels when making predictions").  Adapted: the network, data and optimizer
of ``pixelcnn_masked_conv_a_then_b`` with the first mask of type B; two Adam steps watched.
"""

import torch
from case_r28_pixelcnn_masked_conv_a_then_b import PIXEL, raster_after
from case_r28_pixelcnn_masked_conv_a_then_b import step as _step
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK

SOURCE = (
    "https://qeeebo.com/questions/wha/d7/a9f/"
    "what-is-a-masked-convolution-in-pixel-recurrent-neural-networks"
)
DESCRIPTION = "PixelCNN first layer with mask B: each prediction reads the pixel it predicts"
ASK = []
MUST = [
    [
        r"mask\s?B",
        r"mask\s?A",
        r"mask type|type[- ][AB]\b",
        r"(centre|center|current|same|own) pixel",
        r"sees (the|its) (input|target|pixel)",
        r"leak\w*",
        r"autoregressive|causal\w*|raster",
    ]
]
MUST_NOT = [FALSE_OK, CLAIMS_NONFINITE, r"\bdead\b"]


def step(watch):
    return _step(watch, first="B")


def truth(run):
    for grads in run.grads:
        for n, g in grads.items():
            assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
    assert float(run.dependence[PIXEL]) > 0  # the prediction reads its own pixel
    later = raster_after(PIXEL).clone()
    later[PIXEL] = False
    assert float(run.dependence[later].abs().max()) == 0.0
