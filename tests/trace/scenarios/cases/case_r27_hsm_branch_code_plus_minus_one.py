"""The control of ``hsm_branch_code_zero_one``: the same CBOW hierarchical softmax with the branch
signs ``s_j = 2 b_j - 1`` in ``{+1, -1}``, so that every node on a word's path contributes ``log
sigma(+-v^T h)``, left turns as well as right turns.  Every node vector and every context vector
gets a finite, nonzero gradient, the left-turn terms vary with the parameters and train too.

Source: http://building-babylon.net/2017/08/01/hierarchical-softmax/ ("Hierarchical softmax is an
alternative to the softmax in which the probability of any one outcome depends on a number of model
parameters that is only logarithmic in the total number of outcomes"; "To keep things concrete,
I'll illustrate using the CBOW learning task from word2vec").  Adapted: the bug's data, model and
optimizer with signed branch codes.
"""

import math

import torch
from case_r27_hsm_branch_code_zero_one import left_turn_grads
from case_r27_hsm_branch_code_zero_one import step as _step
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = "http://building-babylon.net/2017/08/01/hierarchical-softmax/"
DESCRIPTION = "control: hierarchical softmax with branch signs +-1, every node trains"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [CLAIMS_NONFINITE, CLAIMS_ERROR, r"all[- ]zero", r"\bzero grad\w*", r"\bdead\b"]


def step(watch):
    return _step(watch, signed=True)


def truth(run):
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()) and bool((g.abs().sum(1) > 0).all()), n  # every row
    left = run.per_node[run.bits == 0]
    assert float((left - math.log(2)).abs().max()) > 1e-2
    for g in left_turn_grads(run):
        assert bool(g.abs().sum() > 0)
