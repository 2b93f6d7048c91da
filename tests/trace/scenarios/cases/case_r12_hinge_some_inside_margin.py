"""Control: the same linear SVM and hinge loss on the same batch at its first epoch: some examples
are beyond the margin (their clamp is flat and they contribute nothing) and the others inside it
or misclassified (they contribute ``-y x`` each).  ``fc.weight`` and ``fc.bias`` get finite,
nonzero gradients from the examples inside the margin only, which is the hinge loss's gradient;
the step moves the classifier.

Source: https://stevengong.co/notes/Hinge-Loss ("Hinge stops caring once you are past the margin
... The 'hinge' shape (flat then linear) means the gradient is zero for safe points and constant
for unsafe ones, which is why only the margin violators (support vectors) drive the SVM
solution").
"""

import torch
from case_r12_hinge_all_beyond_margin import step as _step
from scenario_kit import CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = "https://stevengong.co/notes/Hinge-Loss"
DESCRIPTION = "control: hinge loss, some examples inside the margin: gradient from those, healthy"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [CLAIMS_NONFINITE, r"all-zero", r"\bzero gradient", r"no gradient"]


def step(watch):
    return _step(watch, warm_up=False)


def truth(run):
    assert bool((run.margins >= 1).any()) and bool((run.margins < 1).any())
    assert run.loss > 0
    for n, gr in run.grads.items():
        assert bool(torch.isfinite(gr).all()) and bool(gr.abs().sum() > 0), n
    assert run.moved
