"""The control of ``ema_bn_buffers_not_copied``: the same model EMA updated over the whole
``state_dict()``, as timm's ``ModelEmaV2`` does: floating-point entries (the parameters and the
BatchNorm's running mean and variance) are averaged, the integer ``num_batches_tracked`` is
copied.  The shadow's BatchNorm statistics follow the model's; the training steps are the same
ordinary steps, every gradient finite and nonzero.

Source: https://timm.fast.ai/training_modelEMA ("class ModelEmaV2(nn.Module)"; "for ema_v, model_v
in zip(self.module.state_dict().values(), model.state_dict().values()): ...
ema_v.copy_(update_fn(ema_v, model_v))").  Adapted: the bug's model, data and decay; the integer
buffer copied instead of averaged.
"""

import torch
from case_r25_ema_bn_buffers_not_copied import DECAY, _training_was_ordinary
from case_r25_ema_bn_buffers_not_copied import step as _step
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = "https://timm.fast.ai/training_modelEMA"
DESCRIPTION = "control: EMA over the whole state_dict, BatchNorm buffers included"
ASK = []
MUST = [[HEALTHY_OK, r"\bEMA\b", r"moving average"]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    r"\bdead\b",
    r"all[- ]zero",
    r"buffers? (were |are )?(not|never) (copied|updated|averaged)",
]


def update_state_dict(ema, model):
    with torch.no_grad():
        for e, m in zip(ema.state_dict().values(), model.state_dict().values(), strict=True):
            if e.dtype.is_floating_point:
                e.mul_(DECAY).add_(m, alpha=1 - DECAY)
            else:
                e.copy_(m)


def step(watch):
    return _step(watch, update=update_state_dict)


def truth(run):
    _training_was_ordinary(run)
    bn = run.ema[1]
    assert float(bn.running_mean.abs().max()) > 0.005 and int(bn.num_batches_tracked) == 2
