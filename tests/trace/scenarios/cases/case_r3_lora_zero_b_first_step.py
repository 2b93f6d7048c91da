"""Control: the same LoRA model with only the base weights frozen, the adapters and the head
trainable, AdamW as usual.  On the first step lora_A's gradient is exactly zero -- it is
B^T times the upstream gradient and B starts at zero -- while lora_B gets a nonzero one; from
the second step on both train.  Nothing is wrong: it is how LoRA starts.

Source: https://theneuralbase.com/lora-fundamentals/learn/beginner/lora-freezing-weights-training-adapters/
("LoRA: freezing weights, training adapters": "freezes all original model weights and instead
trains tiny A and B weight matrices").
"""

import torch
from case_r3_lora_adapters_frozen import step as _step
from scenario_kit import CLAIMS_NO_ZERO_GRAD, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = (
    "https://theneuralbase.com/lora-fundamentals/learn/beginner/"
    "lora-freezing-weights-training-adapters/"
)
DESCRIPTION = "control: LoRA, base frozen; first step lora_A grad exactly 0 because B = 0"
ASK = []
MUST = [[HEALTHY_OK, r"lora_A"]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_NO_ZERO_GRAD,
    r"lora_[AB][^\n]*never called",
    r"no gradient (reached|for) [qv]\.lora",
    r"\bdead\b",
    r"vanish",
    r"frozen[^\n]*(still )?moved",
]


def step(watch):
    return _step(watch, freeze_pass_after_adapters=False)


def truth(run):
    m = run.model
    for lora in (m.q, m.v):
        assert lora.lora_A.weight.grad is not None and lora.base.weight.grad is None
        assert bool((lora.lora_A.weight.grad == 0).all())  # B = 0: A's gradient is zero
        assert bool(lora.lora_B.weight.grad.abs().sum() > 0)
        assert not torch.equal(lora.lora_B.weight.detach(), torch.zeros_like(lora.lora_B.weight))
