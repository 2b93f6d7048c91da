"""A PixelCNN whose masks are applied once, to the weights at construction (``weight.mul_(mask)``
under ``no_grad``), and not in the forward, which convolves with the raw weight.  On the first step
the hidden entries are 0 and the model is causal, but their gradients are not zero (the forward
used them, with the value 0): the first Adam step moves every one of them off 0, and from the
second step on the prediction for a pixel reads that pixel and later ones.  All gradients are finite
and nonzero; nothing raises.

Source: https://geeksrepos.com/rogertrullo/Gated-PixelCNN-Pytorch ("in order to build this model we
need the elements of the vector to be dependent only on the previous elements"; "the paper Pixel
Recurrent Networks proposed to mask the weights of the convolutions in order to limit the Receptive
Field (RF) of the network in such a way that the dependencies mentioned are satisfied").  Adapted:
the network, data and optimizer of ``pixelcnn_masked_conv_a_then_b``, masks A then B applied to the
weights once; two Adam steps watched.
"""

from case_r28_pixelcnn_masked_conv_a_then_b import PIXEL, raster_after
from case_r28_pixelcnn_masked_conv_a_then_b import step as _step
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK

SOURCE = "https://geeksrepos.com/rogertrullo/Gated-PixelCNN-Pytorch"
DESCRIPTION = "PixelCNN masks applied to the weights once at init: a step revives masked entries"
ASK = []
MUST = [
    [
        r"mask\w*",
        r"(centre|center|current|same|own|future|later) pixels?",
        r"leak\w*",
        r"autoregressive|causal\w*|raster",
        r"(zeroed|zero) (weight )?entries (move|moved|revived)",
    ]
]
MUST_NOT = [FALSE_OK, CLAIMS_NONFINITE, r"\bdead\b"]


def step(watch):
    return _step(watch, apply="init")


def truth(run):
    for n, mask in run.masks.items():
        hidden = mask == 0
        assert bool((run.initial[n][hidden] == 0).all()), n  # zero before the first step
        assert bool((run.grads[0][n][hidden] != 0).any()), n  # but with a gradient
        param = dict(run.model.named_parameters())[n].detach()
        assert bool((param[hidden] != 0).all()), n  # moved off 0
    assert float(run.dependence[raster_after(PIXEL)].sum()) > 0  # reads its own and later pixels
