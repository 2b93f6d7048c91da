"""The control of ``dit_adaln_zero_and_zero_out_proj``, a healthy step that looks broken on its first
iteration: the same DiT with adaLN-Zero only, as DiT initialises it (the modulation's last layer
zero, the attention's output projection and the MLP's layers left at their default initialisation).
On the first step every gate is 0, so inside both blocks only the modulation gets a gradient (its
gate rows, from the branches' nonzero outputs): the attention and MLP weights get exactly zero, and
so do the timestep and label embedders, whose only way to the loss is through zero modulation
weights.  On the second step the gates and the modulation have left zero and every parameter gets a
finite, nonzero gradient.  Two steps are watched; nothing is wrong.

Source: https://niyunsheng.github.io/from-dit-to-hunyuan-the-evolution-of-adaln-zero-in-generative-models
("The "Zero" Trick: The critical innovation is Zero-Initialization. We initialize the final linear
layer that predicts these parameters to zeros. This ensures that at the start of training, the
residual branches output zero, making the entire DiT block behave as an Identity Function. This
allows gradients to flow through the deep network unimpeded"; its ``DiTBlock``:
``nn.init.constant_(self.adaLN_modulation[-1].weight, 0)``).  Adapted: the bug's model, data and
optimizer with the branches' last layers at their default initialisation.
"""

import torch
from case_r32_dit_adaln_zero_and_zero_out_proj import step as _step
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = (
    "https://niyunsheng.github.io/from-dit-to-hunyuan-the-evolution-of-adaln-zero-in-generative-"
    "models"
)
DESCRIPTION = "healthy: DiT adaLN-Zero (gates start at 0): blocks' weights live from the 2nd step"
ASK = []
MUST = [
    [HEALTHY_OK, r"zero[- ]init\w*|adaLN[- ]Zero", r"first step", r"gates?[^\n]{0,40}(zero|0\b)"]
]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    r"\bdead\b",
    r"requires_grad\s*(=|is|was)?\s*False",
    r"not in (the |any )?optimi[sz]er",
    r"never (move|moved|moves|update|learn|train)",
    r"stuck|fixed point",
]


def step(watch):
    return _step(watch, zero_out=False)


def truth(run):
    first, second = run.grads
    for n in first:
        live_at_once = ".adaLN_modulation." in n or not n.startswith(
            ("blocks.", "t_embed.", "y_embed.")
        )
        assert bool(torch.isfinite(first[n]).all()), n
        assert bool(first[n].abs().sum() > 0) == live_at_once, n
        assert bool(torch.isfinite(second[n]).all()) and bool(second[n].abs().sum() > 0), n
    assert run.gates > 0
