"""Control: the same WGAN-GP critic step with create_graph=True, as the recipe has it: the
penalty has a graph, its second-order gradient reaches the critic's weights, and the critic's
gradient is that of the Wasserstein term plus the penalty.  The critic's output bias (2.bias)
gets an exactly-zero gradient by construction: mean(D(fake)) - mean(D(real)) cancels it and the
penalty (a gradient with respect to the input) does not depend on it; naming that is right too.
(Corrected after the tool's first run: the phrases had asked for "ok" alone, wrong about torch
for 2.bias; see README, round 2.)

Source: https://nn.labml.ai/gan/wasserstein/gradient_penalty/index.html
(torch.autograd.grad(..., create_graph=True)).
"""

import torch
from case_r2_gradient_penalty_without_create_graph import reference
from case_r2_gradient_penalty_without_create_graph import step as _step
from scenario_kit import CLAIMS_ERROR, CLAIMS_NO_ZERO_GRAD, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = "https://nn.labml.ai/gan/wasserstein/gradient_penalty/index.html"
DESCRIPTION = "control: WGAN-GP penalty with create_graph=True; second-order grad reaches D"
ASK = []
MUST = [[HEALTHY_OK, r"\b2\.bias\b"]]
MUST_NOT = [
    CLAIMS_NO_ZERO_GRAD,
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    r"(sums|summed|accumulat\w*)[^\n]{0,40}\b(2|two) (backward )?passes",
]


def step(watch):
    return _step(watch, create_graph=True)


def truth(run):
    assert run.gp_has_graph
    w_only, with_gp = reference(False), reference(True)
    for g, b in zip(run.grads, with_gp, strict=True):
        assert torch.allclose(g, b, rtol=1e-4, atol=1e-7)
    assert any(not torch.allclose(g, a, rtol=1e-3) for g, a in zip(run.grads, w_only, strict=True))
    assert bool((run.grads[-1] == 0).all())  # 2.bias: zero by construction (see above)
    assert all(bool((g != 0).any()) for g in run.grads[:-1])
