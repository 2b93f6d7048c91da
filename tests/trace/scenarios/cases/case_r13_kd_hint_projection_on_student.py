"""Control: the same feature distillation with the projection where FitNets puts its regressor,
on the student's side: ``student.proj`` (``Linear(8, 32)``) maps the student's hidden features to
the teacher's width outside the teacher's ``no_grad`` block, and the hint loss is
``mse(proj(s_h), t_h)``.  The projection is trained with the student; every student parameter
gets a finite, nonzero gradient and moves.  The frozen teacher is not watched.

Source: https://roymiles.github.io/blog/knowledge-distillation ("Feature-based methods match
internal representations at one or more hidden layers"; "All three can be combined, and each adds
a different inductive bias to the student").
"""

import torch
from case_r13_kd_hint_projection_under_no_grad import step as _step
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = "https://roymiles.github.io/blog/knowledge-distillation"
DESCRIPTION = "control: hint projection on the student's features: it trains with the student"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    r"proj\S*[^\n]{0,60}no_grad",
    r"all-zero",
    r"no gradient",
]


def step(watch):
    return _step(watch, proj_on_teacher=False)


def truth(run):
    for n, gr in run.grads.items():
        assert gr is not None and bool(torch.isfinite(gr).all()) and bool(gr.abs().sum() > 0), n
    assert all(run.moved.values())
