"""Control: the same fine-tune with the ``module.`` prefix stripped from the checkpoint's keys
(and its old head left out): ``load_state_dict(strict=False)`` now reports only the new head's
keys as missing and nothing unexpected, the frozen backbone holds the pretrained weights, and the
head trains on them (finite, nonzero gradients; the frozen backbone gets none, as intended).

Source: https://taourl.com/read-2482346.html ("To resolve this, strip the ``module.`` prefix or
modify the state dictionary: # Solution 1: Remove 'module.' prefix new_state_dict =
{k.replace('module.', ''): v ...}").
"""

import torch
from case_r14_load_state_dict_module_prefix_strict_false import step as _step
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = "https://taourl.com/read-2482346.html"
DESCRIPTION = "control: 'module.' stripped before load_state_dict: backbone loaded, head trains"
ASK = []
MUST = [[HEALTHY_OK, r"^summary:[^\n]*(frozen|requires_grad)"]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    r"missing[_ ]keys?[^\n]{0,40}body",
    r"unexpected[_ ]keys?",
    r"random(ly)?[- ]initiali[sz]ed (backbone|body)",
]


def step(watch):
    return _step(watch, strip_prefix=True)


def truth(run):
    assert set(run.missing) == {"head.weight", "head.bias"}
    assert run.unexpected == []
    assert run.loaded
    assert run.grads["body.0.weight"] is None
    for n in ("head.weight", "head.bias"):
        gr = run.grads[n]
        assert gr is not None and bool(torch.isfinite(gr).all()) and bool(gr.abs().sum() > 0)
