"""Control: the same regressor and bounds with the division made safe in both branches: the
denominator itself goes through ``torch.where`` (``1`` where ``b - a == 0``) before dividing, so the
unselected branch is a finite number and its zero gradient stays zero.  The 8 entries with
coinciding bounds send exactly zero gradient to their output (``where`` picks the constant 1 there),
the others train the regressor; every parameter's gradient is finite and nonzero.

Source: https://discuss.pytorch.org/t/special-treatment-of-0-0/161107 (the reply's warning that
``torch.where()`` backpropagates nans "even in the 'branch not followed'" and its proposal to mask
instead).  Adapted: the mask is the usual double ``where``, a safe denominator first.
"""

import torch
from case_r13_where_guarded_division_nan import step as _step
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = "https://discuss.pytorch.org/t/special-treatment-of-0-0/161107"
DESCRIPTION = "control: denominator made safe by a first torch.where: finite gradients, healthy"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [CLAIMS_NONFINITE, CLAIMS_ERROR, r"0 ?/ ?0", r"divi\w* by (zero|0)"]


def step(watch):
    return _step(watch, safe=True)


def truth(run):
    assert bool(torch.isfinite(run.c).all())
    for n, gr in run.grads.items():
        assert bool(torch.isfinite(gr).all()) and bool(gr.abs().sum() > 0), n
    assert bool(run.grads["2.weight"][1].abs().sum() > 0)  # column 1 trains on its other rows
