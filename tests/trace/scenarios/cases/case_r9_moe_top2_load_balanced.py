"""Control: the same mixture-of-experts layer with top-2 routing, a router at its default
initialisation and a Switch-style load-balancing auxiliary loss (fraction of tokens routed to
each expert times its mean router probability): every expert receives tokens, every expert and
the router get finite, nonzero gradients.

Source: https://github.com/lucidrains/mixture-of-experts/issues/10 ("Load balancing loss?": "the
load balancing loss is a auxiliary loss", defined in the repository's MoE layer).
"""

from case_r9_moe_router_collapsed_top1 import step as _step
from scenario_kit import CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = "https://github.com/lucidrains/mixture-of-experts/issues/10"
DESCRIPTION = "control: MoE top-2 with load-balancing aux loss: every expert gets tokens and grads"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    r"experts\.\d[^\n]{0,60}(no gradient|\bNone\b|not (called|run)|did not run)",
    r"all-zero",
]


def step(watch):
    return _step(watch, balanced=True)


def truth(run):
    assert set(run.idx.flatten().tolist()) == {0, 1, 2, 3}
    for n, g in run.grads.items():
        assert g is not None and bool(g.abs().sum() > 0), n
