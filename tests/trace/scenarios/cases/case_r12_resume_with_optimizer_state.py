"""Control: the same interrupted AdamW run resumed from a checkpoint holding both state dicts, the
new optimizer given ``load_state_dict(checkpoint["optimizer"])`` before its first step.  It
continues from the saved moments and step count (3, then 4): the resumed weights after the step
equal the uninterrupted run's exactly; every gradient is finite and nonzero.

Source: https://openillumi.com/?p=83764 ("Saving the optimizer state is essential if you want to
interrupt and resume model training.  Especially in adaptive learning rate methods like Adam or
RMSprop, the optimizer holds the history of past gradients (moments, etc.) for each parameter";
``torch.save({'epoch': epochs, 'model_state_dict': model.state_dict(), 'optimizer_state_dict':
optimizer.state_dict(), ...}, PATH)``).
"""

import torch
from case_r12_resume_without_optimizer_state import step as _step
from scenario_kit import CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = "https://openillumi.com/?p=83764"
DESCRIPTION = "control: resumed with optimizer.load_state_dict: same step as the uninterrupted run"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    r"(no|empty|missing|without)[^\n]{0,20}optimi[sz]er state",
    r"optimi[sz]er state[^\n]{0,20}(not loaded|missing|empty|lost)",
    r"fresh",
    r"all-zero",
]


def step(watch):
    return _step(watch, load_optimizer=True)


def truth(run):
    assert run.state_before > 0
    assert all(s == 4 for s in run.steps)
    assert run.same_grads
    assert run.max_diff == 0.0
    for n, gr in run.grads.items():
        assert bool(torch.isfinite(gr).all()) and bool(gr.abs().sum() > 0), n
