"""The control of ``lwf_old_targets_recomputed_each_step``: the same Learning without Forgetting
steps with the old task's outputs on the new task's examples recorded once, from the network as
the old task left it, before any new-task step.  From the second joint step on (the watched steps are the 11th and 12th), the current old
head's outputs differ from the recorded ones, and the distillation term pulls the shared body and
the old head back towards them: its gradient on the body is a visible share of the new task's
(asserted above 1e-3) and every gradient is finite and nonzero.

Source: https://pmc.ncbi.nlm.nih.gov/articles/PMC7712976/table/array1 ("Algorithm 1 Learning
without forgetting"; "Start with: shared parameters, task specific parameters for each old task,
training data and ground truth on the new task"; "Initialize: // compute output of old tasks for
new data // randomly initialize new parameters").  Adapted: the bug's networks, tasks, temperature
and optimizer.
"""

import torch
from case_r26_lwf_old_targets_recomputed_each_step import old_head_ratio
from case_r26_lwf_old_targets_recomputed_each_step import step as _step
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = "https://pmc.ncbi.nlm.nih.gov/articles/PMC7712976/table/array1"
DESCRIPTION = "control: LwF old-task outputs recorded once before the new task: distillation acts"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    r"all[- ]zero",
    r"\bzero grad\w*",
    r"\bdead\b",
    r"vanish\w*",
]


def step(watch):
    return _step(watch, record_once=True)


def truth(run):
    assert all(s > 1e-3 for s in run.shares)
    for _, _, grads in run.iterations:
        assert old_head_ratio(grads) > 1e-3
        for n, g in grads.items():
            assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
