"""The control of ``ip_adapter_frozen_after_attaching``: the same IP-Adapter step with the denoiser
frozen before the adapter's projections are attached, so ``to_k_ip`` and ``to_v_ip`` keep
``requires_grad=True``.  The adapter's projections and the image projection get finite, nonzero
gradients; the denoiser's own weights are frozen, get no gradient and are outside the optimizer, by
design (only the adapter trains).

Source: https://ostin.tistory.com/339 ("Decoupled cross-attention을 통해 image feature를 분리하여 prompting 하는
IP-adapter 제안"; "Text embedding과 image embedding을 통합하는 대신 새로운 cross-attention layer를 추가하고 같은 Query에
대해 수행된 각각의 cross-attention layer의 출력을 더한다"; "U-Net에서 훈련 가능한 가중치는 W'k, W'v").  Adapted: the bug's
networks, data and optimizer with the freeze before the adapter is attached.
"""

import torch
from case_r33_ip_adapter_frozen_after_attaching import step as _step
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = "https://ostin.tistory.com/339"
DESCRIPTION = "healthy: IP-Adapter, denoiser frozen first, to_k_ip/to_v_ip and projection train"
ASK = ["unet.blocks.0.to_q.weight"]
MUST = [
    [HEALTHY_OK, r"(frozen|freez\w*|requires_grad)[^\n]{0,80}(intended|deliberate|by design)"],
]
MUST_NOT = [CLAIMS_NONFINITE, CLAIMS_ERROR, r"\bdead\b"]


def step(watch):
    return _step(watch, freeze_first=True)


def truth(run):
    for n, g in run.grads.items():
        if "_ip." in n or n.startswith("image_proj."):
            assert n in run.held and run.flags[n], n
            assert g is not None and bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
        else:
            assert n not in run.held and not run.flags[n] and g is None, n
