"""Control: the same frozen backbone run under ``torch.no_grad()`` instead: its features are
ordinary tensors without a graph, the head saves them for backward, and the head trains (the
backbone, frozen, gets no gradient, as meant).

Source: https://gitea.ts-pc.fr/Ethanfel/ComfyUI-SelVA/src/commit/357b875e5e92083786a78aaeec948598dbe97c70/nodes
(the commit clones the inference tensors so that "the conditions built from them are clean
non-inference tensors"; features computed under ``no_grad`` are such tensors from the start).
"""

import torch
from case_r5_inference_features_to_head import step as _step
from scenario_kit import CLAIMS_ERROR, CLAIMS_NO_ZERO_GRAD, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = (
    "https://gitea.ts-pc.fr/Ethanfel/ComfyUI-SelVA/src/commit/"
    "357b875e5e92083786a78aaeec948598dbe97c70/nodes"
)
DESCRIPTION = "control: frozen backbone under no_grad, head on its features trains"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [CLAIMS_NONFINITE, CLAIMS_NO_ZERO_GRAD, CLAIMS_ERROR, r"inference"]


def step(watch):
    return _step(watch, mode="no_grad")


def truth(run):
    assert run.error is None
    head = run.model.head
    for p in head.parameters():
        assert p.grad is not None and bool(p.grad.abs().sum() > 0)
    assert not torch.equal(head.weight.detach(), run.before)
    assert all(p.grad is None for p in run.model.backbone.parameters())
