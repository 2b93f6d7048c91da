"""The control of ``deepdream_octave_image_not_leaf``, and a healthy step that looks broken: the
same two-octave DeepDream with each octave's image made a new leaf, ``F.interpolate(img.detach(),
...).requires_grad_(True)``.  Both octaves run, each ascending its image with its own SGD; the
network is frozen on purpose (``requires_grad=False`` on every parameter), so no parameter gets a
``.grad`` and none moves: the only tensor optimized is the image, which the watched model does not
own.

Source: https://wp.nyu.edu/shanghai-ima-documentation/?p=15967 ("This week, I was playing with the
deep dream. I focused on tuning the parameters of the step, num_octave, octave_scale and iteration
to see what will happen"; "Change the number of octave from 3 to 6 yielded some very interesting
results").  Adapted: the bug's network, image and octaves with the image detached at each octave.
"""

import torch
from case_r29_deepdream_octave_image_not_leaf import step as _step
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = "https://wp.nyu.edu/shanghai-ima-documentation/?p=15967"
DESCRIPTION = "healthy: DeepDream, octave image detached and re-leafed, network frozen by design"
ASK = []
MUST = [
    [
        HEALTHY_OK,
        r"frozen",
        r"requires_grad\s*(=|is|was)?\s*False",
        r"no (trainable|learnable) parameters?",
        r"no parameters? (requires?|required|requiring) grad",
        r"(image|input)[^\n]{0,60}(optimi[sz]\w*|updated|trained)",
    ]
]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    r"non-?leaf",
    r"\bdead\b",
    r"all[- ]zero",
]


def step(watch):
    return _step(watch, detach=True)


def truth(run):
    assert run.error is None and len(run.images) == 2
    for start, end in run.images:
        assert not torch.equal(start, end)
    assert run.images[1][0].shape[-1] == 22  # the second octave, 16 x 1.4
    for n, p in run.net.named_parameters():
        assert p.grad is None and torch.equal(p.detach(), run.before[n]), n
