"""Control: the same top-1 mixture-of-experts layer with capacity factor 1.25 (capacity
``int(1.25 * 16 / 4) = 5`` tokens per expert): every expert receives tokens, tokens over capacity
are dropped to the residual as designed, and the router and every expert get finite, nonzero
gradients.

Source: https://ajkdrag.in/2-Zettels/capacity-factor-for-load-balancing-in-MoEs ("A capacity factor
greater than 1 allows each expert to handle a buffer above the evenly distributed share ...
Common ranges in [1, 1.25]"; over capacity: "drop this token").
"""

from case_r11_moe_capacity_zero_tokens_dropped import step as _step
from scenario_kit import CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = "https://ajkdrag.in/2-Zettels/capacity-factor-for-load-balancing-in-MoEs"
DESCRIPTION = "control: MoE capacity factor 1.25: every expert gets tokens, all params get grads"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    r"experts\.\d[^\n]{0,60}(no gradient|\bNone\b|not (called|run)|did not run|never ran)",
    r"router[^\n]{0,60}(no gradient|\bNone\b)",
]


def step(watch):
    return _step(watch, capacity_factor=1.25)


def truth(run):
    assert all(0 < c <= 5 for c in run.counts)
    for n, g in run.grads.items():
        assert g is not None and bool(g.abs().sum() > 0), n
