"""The model is moved (``model.to(torch.float64)``, the CPU stand-in for a device) in the middle
of training, after Adam has stepped: the parameters are converted, Adam's state (``exp_avg``,
``exp_avg_sq``) stays float32, and the next ``optimizer.step()`` raises a dtype mismatch after a
backward that computed every gradient.  Nothing moves.

Source: https://theneuralbase.com/pytorch/learn/intermediate/moving-model-and-data-to-device/
("When moving models between devices midtraining, optimizer state must also be moved"; "# Move
optimizer state to new device (required if optimizer was already initialized)").
"""

import torch
from case_r5_double_after_optimizer_built import step as _step
from scenario_kit import FALSE_OK

SOURCE = "https://theneuralbase.com/pytorch/learn/intermediate/moving-model-and-data-to-device/"
DESCRIPTION = "model.to(float64) after Adam steps: state float32, next optimizer.step() raises"
ASK = ["0.weight"]
MUST = [
    [r"\braised\b", r"RuntimeError", r"exception", r"\berror\b"],
    [
        r"dtype",
        r"float64",
        r"double",
        r"optimizer",
        r"Adam",
        r"exp_avg",
        r"\bstate\b",
        r"\.step\(",
    ],
]
MUST_NOT = [FALSE_OK]


def step(watch):
    return _step(watch, warm_steps=2)


def truth(run):
    assert run.error is not None and "dtype" in str(run.error)
    state = run.optimizer.state[run.model[0].weight]
    assert state["exp_avg"].dtype == torch.float32
    for p, b in zip(run.model.parameters(), run.before, strict=True):
        assert p.grad is not None  # the backward ran ...
        assert torch.equal(p.detach(), b)  # ... the step did not
