"""The control of ``dreambooth_text_encoder_not_in_optimizer``: the same DreamBooth step with prior
preservation and the optimizer built over the denoiser and the text encoder (``itertools.chain(unet.
parameters(), text_encoder.parameters())``).  Both get finite, nonzero gradients on each step, both
are cleared by ``zero_grad`` and stepped; the rare token's embedding moves.  The instance and prior
halves are split with ``torch.chunk`` and summed with weight 1, by design.

Source: https://leeroopedia.com/index.php/Principle:Huggingface_Diffusers_Prior_Preservation_Training
("In each training step, the loop processes a batch that contains both instance (subject) images
and class-prior images concatenated together"; "When prior preservation is enabled, the model
prediction and target are split into instance and class halves using torch.chunk()"; "Instance
loss and prior loss are computed separately as MSE losses, then combined: loss = loss_instance +
lambda * loss_prior").  Adapted: the bug's networks, data and schedule with the text encoder in the
optimizer.
"""

import torch
from case_r33_dreambooth_text_encoder_not_in_optimizer import step as _step
from scenario_kit import CLAIMS_ERROR, CLAIMS_NO_ZERO_GRAD, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = (
    "https://leeroopedia.com/index.php/Principle:Huggingface_Diffusers_Prior_Preservation_Training"
)
DESCRIPTION = "control: DreamBooth with prior preservation, UNet and text encoder both optimized"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    CLAIMS_NO_ZERO_GRAD,
    r"\bdead\b",
    r"not in (the |any )?optimi[sz]er",
]


def step(watch):
    return _step(watch, both=True)


def truth(run):
    for grads in run.grads:
        for n, g in grads.items():
            assert run.ids[n] in run.held, n
            assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
    assert not torch.equal(run.sks[0], run.sks[1])
