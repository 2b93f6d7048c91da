"""Control: the same FSDP2 step on two processes (gloo, CPU) with the optimizer built right after
``fully_shard`` and before any forward: ``model.parameters()`` gives the sharded parameters, the
optimizer holds them, each step moves every weight, and the two processes keep identical weights
(the gradients are reduced across them).  Every gradient is finite and nonzero.

Source: https://github.com/pytorch/pytorch/issues/149205 (the issue's reference runs: the same
update without the forward before the optimizer is built; "Non-parallel and DDP are not
affected").
"""

from case_r15_fsdp2_forward_before_optimizer import _finite_nonzero, run_fsdp
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = "https://github.com/pytorch/pytorch/issues/149205"
DESCRIPTION = "control: FSDP2, optimizer built before any forward: weights move, ranks agree"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    r"(did not|didn't|never) (move|change)|unchanged",
    r"not in (the |any )?optimizer",
    r"no gradient",
    r"all-zero",
]


def step(watch):
    return run_fsdp(watch, forward_first=False)


def truth(run):
    r0, r1 = run.ranks
    for r in (r0, r1):
        assert all(r["in_opt"])
        assert all(a != b for a, b in zip(r["after"], r["before"], strict=True))
        for it in r["grads"]:
            assert all(g is not None and _finite_nonzero(g) for g in it)
    assert r0["after"] == r1["after"]  # the replicas agree
