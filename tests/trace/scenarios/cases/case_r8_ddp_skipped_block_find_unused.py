"""Control: the same stochastic-depth model and two steps under DDP (two processes, gloo), built
with ``find_unused_parameters=True``: in the first step DDP marks ``block2``'s parameters ready
(their ``.grad`` stays None) and averages the rest; the second step uses every block.  The
replicas stay identical and nothing raises.  Naming ``block2`` as not called in the first step is
right too.

Source: https://github.com/pytorch/pytorch/issues/90171 ("one needs to set
find_unused_parameters=True").  Two processes forked with a gloo group.
"""

from case_r8_ddp_skipped_block_no_find_unused import step as _step
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = "https://github.com/pytorch/pytorch/issues/90171"
DESCRIPTION = "control: DDP with find_unused_parameters=True, block skipped: averaged, equal"
ASK = []
MUST = [[HEALTHY_OK, r"block2[^\n]{0,80}(not called|never called|was not (called|run)|skipped)"]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    r"not (been )?averaged",
    r"never averaged",
    r"not (been )?(all-?reduced|synchroni[sz]ed|synced)",
]


def step(watch):
    return _step(watch, find_unused=True)


def truth(run):
    r0, r1 = run.ranks
    assert r0["grad_none"] and r1["grad_none"]
    assert r0["error"] is None and r1["error"] is None
    assert len(r0["weights"]) == 2 and r0["weights"] == r1["weights"]  # replicas equal
