"""The control of ``swav_sinkhorn_codes_with_grad``: the same SwAV step with the Sinkhorn-Knopp codes
computed under ``torch.no_grad()``, as SwAV does: the codes are constant targets and the gradient is
the swapped prediction's alone.  The prototypes are renormalised in place under ``no_grad`` before
the step, by design.  Every gradient is finite and nonzero.

Source: https://flammingfrost.github.io/tech-blog/categories/self-supervised-learning ("In paper SeLa
(Self-labeling), the cluster-based self-supervised method is transformed to a transportation
problem, and optimized using Sinkhorn-Knopp algorithm. This paper refined the methods by using
contrastive learning between views and applied multi-crop technique").  Adapted: the bug's
networks, views and optimizer with the codes under ``no_grad``.
"""

import torch
from case_r33_swav_sinkhorn_codes_with_grad import step as _step
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = "https://flammingfrost.github.io/tech-blog/categories/self-supervised-learning"
DESCRIPTION = "control: SwAV with the Sinkhorn codes under no_grad"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [CLAIMS_NONFINITE, CLAIMS_ERROR, r"\bdead\b", r"missing (a )?(no_grad|detach)"]


def step(watch):
    return _step(watch, codes_grad=False)


def truth(run):
    assert not run.q_requires_grad
    for g, e in zip(run.grads, run.expected, strict=True):
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0)
        assert torch.allclose(g, e, rtol=1e-5, atol=1e-8)
