"""Control: the same DDP model with netA frozen (eval, requires_grad_(False)) before it is
wrapped in DistributedDataParallel: DDP synchronises only the head, every iteration's head
gradient is averaged over the two processes, and the replicas stay equal.

Source: https://github.com/ShiqiYu/OpenGait/issues/230 (the same freeze, done before DDP is
built instead of inside the forward after it).  Two processes forked with a gloo group.
"""

from case_r3_ddp_freeze_after_wrap import _close, run_ddp
from scenario_kit import CLAIMS_ERROR, CLAIMS_NO_ZERO_GRAD, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = "https://github.com/ShiqiYu/OpenGait/issues/230"
DESCRIPTION = "control: DDP, netA frozen before wrapping: head averaged, replicas equal"
ASK = []
MUST = [[HEALTHY_OK, r"frozen"]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_NO_ZERO_GRAD,
    CLAIMS_ERROR,
    r"Expected to have finished reduction",
    r"next forward",
    r"not (been )?averaged",
    r"never averaged",
    r"not (been )?(all-?reduced|synchroni[sz]ed|synced)",
]


def step(watch):
    return run_ddp(watch, freeze_before_wrap=True)


def truth(run):
    r0, r1 = run.ranks
    for r in (r0, r1):
        assert r["error"] is None and len(r["grads"]) == 3
        assert all(g[0] is None and g[1] is None for g in r["grads"])  # netA frozen
    for it in range(3):
        assert _close(r0["grads"][it][2], r1["grads"][it][2])  # head averaged every time
    for a, b in zip(r0["params"], r1["params"], strict=True):
        assert _close(a, b, tol=1e-7)  # the replicas stay equal
