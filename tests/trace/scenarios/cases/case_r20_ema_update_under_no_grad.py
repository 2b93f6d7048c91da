"""Control: the same model EMA updated as timm's ``ModelEmaV2`` does, under ``torch.no_grad()``,
copying ``decay * ema + (1 - decay) * model`` into the copy's ``state_dict()`` tensors after the
optimizer step.  The training step is ordinary (every gradient finite and nonzero, every parameter
moves); the EMA weights move by ``1 - decay`` of the way towards the new weights and never get a
gradient.

Source: https://timm.fast.ai/training_modelEMA ("we keep 99.99% of the previous model weights and
only update 0.01% of the new weights at each iteration"; "model_weights = decay * model_weights +
(1 - decay) * new_model_weights"; "self.module = deepcopy(model)").  Adapted as the bug:
``Linear(10, 32)``, ``Tanh``, ``Linear(32, 3)``, SGD at 0.1, decay 0.99.
"""

import torch
from case_r20_ema_update_outside_no_grad_raises import DECAY
from case_r20_ema_update_outside_no_grad_raises import step as _step
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = "https://timm.fast.ai/training_modelEMA"
DESCRIPTION = "control: EMA copy updated timm-style under no_grad after the step: healthy"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [CLAIMS_NONFINITE, CLAIMS_ERROR, r"in-?place", r"\bleaf\b"]


def step(watch):
    return _step(watch, timm_update=True)


def truth(run):
    assert run.error is None
    assert not run.ema.module.training
    for p, e, b in zip(run.model.parameters(), run.ema.module.parameters(), run.before,
                       strict=True):  # fmt: skip
        assert bool(torch.isfinite(p.grad).all()) and bool(p.grad.abs().sum() > 0)
        assert not torch.equal(p.detach(), b)
        assert e.grad is None
        assert torch.allclose(e.detach(), DECAY * b + (1 - DECAY) * p.detach(), atol=1e-7)
