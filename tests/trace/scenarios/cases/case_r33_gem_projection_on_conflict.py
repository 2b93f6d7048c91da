"""The control of ``gem_projection_condition_flipped``: the same gradient episodic memory step with
the projection applied when the gradients conflict, ``if dot < 0``.  The stepped ``.grad`` is
orthogonal to the memory's gradient (the step leaves the first task's memory loss unchanged to first
order) and still finite and nonzero.  Two backward passes, then ``.grad`` replaced by hand before
the step: by design, that is the method.

Source: https://memorypapers.org/papers/gradient-episodic-memory-for-continual-learning ("Gradient
Episodic Memory introduces episodic memory Mt, loss constraints ℓ(fθ, Mk), and a GEM QP that
projects gradients to avoid increasing past-task losses"; "a small memory buffer stores key
examples, and a QP solver checks every update against these stored experiences").  Adapted: the
bug's network, tasks, memory and optimizer with the condition the right way round.
"""

import torch
from case_r33_gem_projection_condition_flipped import step as _step
from scenario_kit import CLAIMS_ERROR, CLAIMS_NO_ZERO_GRAD, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = "https://memorypapers.org/papers/gradient-episodic-memory-for-continual-learning"
DESCRIPTION = "control: GEM projects the task gradient when it conflicts with the memory's"
ASK = []
MUST = [
    [
        HEALTHY_OK,
        (
            r"\.grad[^\n]{0,80}(replaced|assigned|overwritten|set by hand|copied)[^\n]{0,80}"
            r"(intended|deliberate|on purpose|by design|projection|gem)"
        ),
    ]
]
MUST_NOT = [CLAIMS_NONFINITE, CLAIMS_ERROR, CLAIMS_NO_ZERO_GRAD, r"\bdead\b", r"all[- ]zero"]


def step(watch):
    return _step(watch, flipped=False)


def truth(run):
    assert run.dot < 0
    assert bool(torch.isfinite(run.stepped).all()) and float(run.stepped.norm()) > 0
    assert abs(float(run.stepped @ run.g_ref)) < 1e-4 * float(run.g_ref.norm() * run.stepped.norm())
