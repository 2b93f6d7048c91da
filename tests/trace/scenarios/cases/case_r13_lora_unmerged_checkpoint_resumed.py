"""Control: the same LoRA training resumed from a checkpoint that keeps the base weight unmerged
(``W0``) next to ``lora_A`` / ``lora_B``: loaded into the same LoRA-wrapped architecture, the
resumed model computes exactly what the trained one did (``W0 x + scale B A x``) and the next step
continues the run.  The frozen base weight and bias get no gradient (frozen on purpose, outside
the optimizer), the adapters and the head get finite, nonzero gradients.

Source: https://github.com/espnet/espnet/issues/6107 (the thread's question is whether the merged
weights or the adapter modules should be active, not both; "the saved model weights include merged
LoRA parameters" is the case to avoid when the adapters are loaded too).  Adapted as the bug.
"""

import torch
from case_r13_lora_merged_checkpoint_adapter_still_on import step as _step
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = "https://github.com/espnet/espnet/issues/6107"
DESCRIPTION = "control: LoRA resumed from an unmerged checkpoint: same function, trains on"
ASK = []
MUST = [
    [HEALTHY_OK, r"(frozen|requires_grad)[^\n]{0,80}base|base[^\n]{0,80}(frozen|requires_grad)"]
]
MUST_NOT = [CLAIMS_NONFINITE, CLAIMS_ERROR, r"merg\w*", r"twice", r"double\w*"]


def step(watch):
    return _step(watch, merged=False)


def truth(run):
    assert torch.allclose(run.effective, run.intended, atol=1e-6)
    assert torch.allclose(run.resumed_out, run.trained_out, atol=1e-6)
    assert run.grads["0.base.weight"] is None and run.grads["0.base.bias"] is None
    for n in ("0.lora_A", "0.lora_B", "2.weight", "2.bias"):
        gr = run.grads[n]
        assert bool(torch.isfinite(gr).all()) and bool(gr.abs().sum() > 0), n
