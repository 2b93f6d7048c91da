"""Control: DDP on two processes with gradient accumulation done as documented: no_sync on the
first micro-batch only, the last backward outside it, so the accumulated gradient is averaged
over the processes before the step and both replicas stay equal.

Source: https://github.202132.xyz/Lightning-AI/pytorch-lightning/issues/4092 (a copy of
Lightning-AI/pytorch-lightning#4092: "use DDP no_sync feature to avoid synchronization in steps
that doesn't call optimizer_step").  Two processes forked with a gloo group.
"""

from case_r2_ddp_no_sync_every_microbatch import _close, run_ddp
from scenario_kit import CLAIMS_NO_ZERO_GRAD, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = "https://github.202132.xyz/Lightning-AI/pytorch-lightning/issues/4092"
DESCRIPTION = "control: DDP, no_sync on all but the last micro-batch; averaged, replicas equal"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NO_ZERO_GRAD,
    CLAIMS_NONFINITE,
    r"not (been )?averaged",
    r"never averaged",
    r"not (been )?(all-?reduced|synchroni[sz]ed|synced)",
]


def step(watch):
    return run_ddp(watch, sync_last=True)


def truth(run):
    r0, r1 = run.ranks
    mean = [
        [(u + v) / 2 for u, v in zip(a, b, strict=True)]
        for a, b in zip(r0["local"], r1["local"], strict=True)
    ]
    for r in (r0, r1):
        assert _close(r["grads"], mean)  # averaged over the two processes
    assert not _close(r0["local"], r1["local"])
    assert _close(r0["params"], r1["params"], tol=1e-7)  # the replicas stay equal
