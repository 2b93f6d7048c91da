"""The control of ``deeponet_stage_two_optimizer_on_trunk``: the same second stage of a two-step
DeepONet training with the stage-two optimizer built on the branch, ``torch.optim.Adam(
model.branch.parameters())``.  The trunk, fitted and orthonormalised in stage one, is frozen
(``requires_grad=False``, not in the optimizer, no gradient) by design; the branch gets a finite,
nonzero gradient at both steps and moves, and its loss goes down.

Source: https://www.emergentmind.com/topics/deeponet ("It employs a branch-trunk design where one
network encodes input functions sampled at sensor locations and the other encodes evaluation
coordinates for output reconstruction"; "Enhanced training strategies such as QR-based two-step
optimization facilitate zero-shot generalization and high accuracy in surrogate modeling and
digital twin applications").  Adapted: the bug's networks, data and first stage with the optimizer
on the branch.
"""

import torch
from case_r32_deeponet_stage_two_optimizer_on_trunk import step as _step
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = "https://www.emergentmind.com/topics/deeponet"
DESCRIPTION = "control: DeepONet stage 2, trunk frozen, Adam on the branch"
ASK = []
MUST = [
    [
        HEALTHY_OK,
        r"(frozen|requires_grad\s*=?\s*False)[^\n]{0,80}(intended|deliberate|on purpose|by design)",
    ]
]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    r"\bdead\b",
    r"all[- ]zero",
    r"branch[^\n]{0,40}not in (the |any )?optimi[sz]er",
    r"accumulat\w*",
]


def step(watch):
    return _step(watch, on_branch=True)


def truth(run):
    first, second = run.grads
    assert run.held == {n for n in first if n.startswith("branch.")}
    assert run.moved == run.held
    for n in first:
        if n.startswith("trunk."):
            assert first[n] is None and second[n] is None, n
        else:
            for g in (first[n], second[n]):
                assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
            assert not torch.allclose(second[n], 2 * first[n], rtol=1e-3), n
    assert run.losses[1] < run.losses[0]
