"""Control: the same checkpoint and resume, done as the recipe says: the model is rebuilt and its
weights loaded, then a new optimizer is built over the new model's parameters and the saved
optimizer state (the momentum buffers) loaded into it.  Training goes on where it left off: every
parameter moves.

Source: http://theneuralbase.com/pytorch/qna/resume-training-checkpoint-pytorch/ ("load the saved
checkpoint dictionary using torch.load(), then restore the model and optimizer states with
model.load_state_dict() and optimizer.load_state_dict()").
"""

import torch
from case_r8_reload_model_old_optimizer import step as _step
from scenario_kit import CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = "http://theneuralbase.com/pytorch/qna/resume-training-checkpoint-pytorch/"
DESCRIPTION = "control: model and a new optimizer both restored from the checkpoint: trains"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    r"not (held|in (the|any) optimizer)",
    r"no optimizer",
    r"never (moved|updated|stepped)",
]


def step(watch):
    return _step(watch, rebuild_optimizer=True)


def truth(run):
    assert all(run.grads) and all(run.held)
    for n, p in run.model.named_parameters():
        assert not torch.equal(p.detach(), run.before[n]), n
