"""Control: the same two adapters and the same interleaving, with the pull request's fix: each
adapter's parameters are cached when it is created, and ``optim_step(name)`` builds its optimizer
from that cache.  ``optim_step(a)`` then ``optim_step(b)``: each adapter is stepped once, with its
own gradient; the frozen base and head get none.

Source: https://github.com/gke-labs/open-rl/pull/80 ("cache the params for each adapter id when we
create or load it").
"""

import torch
from case_r10_two_adapters_optimizer_holds_active import step as _step
from scenario_kit import CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = "https://github.com/gke-labs/open-rl/pull/80"
DESCRIPTION = "control: two adapters, each optimizer built from its adapter's cached parameters"
ASK = []
MUST = [[HEALTHY_OK, r"frozen"]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    r"adapters\.[ab][^\n]*(no optimizer|not (held|in)[^\n]*optimizer)",
    r"updated twice|stepped twice|(held|read) by two optimizers",
    r"frozen[^\n]*(still )?moved",
]


def step(watch):
    return _step(watch, cached=True)


def truth(run):
    a_params = list(run.model.adapters["a"].parameters())
    held = run.optimizers["a"].param_groups[0]["params"]
    assert all(any(p is q for q in a_params) for p in held)
    assert not torch.equal(a_params[0].detach(), run.a0[0])
    b_params = list(run.model.adapters["b"].parameters())
    assert not torch.equal(b_params[0].detach(), run.b0[0])
