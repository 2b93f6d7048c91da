"""The control of ``controlnet_branch_is_base_encoder``, a healthy step that looks broken on its first
iteration: the same ControlNet with the branch made by ``copy.deepcopy(base.encoder)`` before the
base is locked, so that locking the base leaves the copy trainable.  On the first step the two
output zero convolutions are zero, so the branch and the input zero convolution get exactly zero
gradient (nothing downstream of them reaches the loss yet); only the output zero convolutions get a
gradient and leave zero.  On the second step every trainable parameter gets a finite, nonzero
gradient.  The base model stays frozen (``requires_grad=False``, no gradient, not in the optimizer)
by design.

Source: https://www.book-ai.org/books/diffusion/chapter-14/section-01 ("Frozen U-Net: The original
Stable Diffusion U-Net, weights locked"; "Trainable Copy: A copy of the encoder portion, initialized
from pretrained weights"; "Zero Convolutions: Connect the trainable copy to the frozen network";
"Understand why zero-convolution is crucial for training stability and preserving pretrained model
quality").  Adapted: the bug's networks, data and optimizer with the copied branch.
"""

import torch
from case_r32_controlnet_branch_is_base_encoder import step as _step
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = "https://www.book-ai.org/books/diffusion/chapter-14/section-01"
DESCRIPTION = (
    "healthy: ControlNet, deep-copied trainable branch, zero convs: branch live from step 2"
)
ASK = []
MUST = [
    [
        HEALTHY_OK,
        r"zero[- ]init\w*|zero[- ]conv\w*",
        r"first step",
        r"(frozen|requires_grad\s*=?\s*False)[^\n]{0,80}(intended|deliberate|on purpose|by design)",
    ]
]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    r"\bdead\b",
    r"same (module|object|encoder)",
    r"alias\w*",
    r"never (move|moved|moves|update|learn|train)",
    r"stuck|fixed point",
]


def step(watch):
    return _step(watch, copied=True)


def truth(run):
    model = run.model
    assert model.control is not model.base.encoder
    first, second = run.grads
    for n, p in model.named_parameters():
        if n.startswith("base."):
            assert not p.requires_grad and first[n] is None and second[n] is None, n
            assert n not in run.moved, n
            continue
        assert p.requires_grad, n
        live_at_once = n.startswith("zero_out.")
        g1, g2 = first[n], second[n]
        assert bool(torch.isfinite(g1).all()) and bool(g1.abs().sum() > 0) == live_at_once, n
        assert bool(torch.isfinite(g2).all()) and bool(g2.abs().sum() > 0), n
        assert n in run.moved, n
