"""Control: the same model with ``model.backbone.requires_grad_(False)`` only (the page's fix):
the new head gets its gradient and trains; the backbone gets none and stays as it was, on
purpose.

Source: https://runebook.dev/en/docs/pytorch/generated/torch.nn.module/torch.nn.Module.requires_grad_
("You should target the specific layers you want to freeze"; "This new layer's parameters are
trainable by default!").
"""

import torch
from case_r4_requires_grad_false_whole_model import step as _step
from scenario_kit import CLAIMS_ERROR, CLAIMS_NO_ZERO_GRAD, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = (
    "https://runebook.dev/en/docs/pytorch/generated/torch.nn.module/torch.nn.Module.requires_grad_"
)
DESCRIPTION = "control: backbone.requires_grad_(False) only: head trains, backbone frozen"
ASK = []
MUST = [[HEALTHY_OK, r"frozen", r"requires_grad"]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_NO_ZERO_GRAD,
    CLAIMS_ERROR,
    r"frozen[^\n]{0,60}(still )?moved",
    r"fc\.weight[^\n]{0,60}(no gradient|\bNone\b)",
]


def step(watch):
    return _step(watch, whole=False)


def truth(run):
    assert run.error is None
    m = run.model
    for n, p in m.backbone.named_parameters():
        assert p.grad is None and torch.equal(p.detach(), run.before["backbone." + n])
    for n, p in m.fc.named_parameters():
        assert p.grad is not None and bool(p.grad.abs().sum() > 0)
        assert not torch.equal(p.detach(), run.before["fc." + n])
