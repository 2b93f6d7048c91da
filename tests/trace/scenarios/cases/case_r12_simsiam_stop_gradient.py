"""Control, a step suspected wrongly: SimSiam with the stop-gradient in its loss function,
``D(p, z)`` detaching ``z`` before the negative cosine similarity, as the repository does.  The
issue's author did not find the stop-gradient in the model; it is in the loss.  The targets carry
no history, the encoder is trained through the predicting branch only, and the step's gradient is
exactly the stop-gradient gradient; every parameter gets a finite, nonzero gradient.

Source: https://github.com/PatrickHua/SimSiam/issues/39 (the reply: ``def D(p, z,
version='simplified'): ... z = z.detach() # stop gradient ... return - F.cosine_similarity(p,
z.detach(), dim=-1).mean()``; "There is a 'detach' after 'z' when compute loss").
"""

import torch
from case_r12_simsiam_no_stop_gradient import relative_difference
from case_r12_simsiam_no_stop_gradient import step as _step
from scenario_kit import CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = "https://github.com/PatrickHua/SimSiam/issues/39"
DESCRIPTION = "control: SimSiam, z.detach() in the loss (stop-gradient present): healthy"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    r"(missing|no|without)[^\n]{0,20}stop[- ]?grad",
    r"dead (units?|relu|neurons?)",
    r"all-zero",
    r"no gradient",
]


def step(watch):
    return _step(watch, stop_gradient=True)


def truth(run):
    assert not any(run.target_grads)
    assert relative_difference(run.grads[0], run.reference, "") < 1e-5
    for grads in run.grads:
        for n, gr in grads.items():
            assert bool(torch.isfinite(gr).all()) and bool(gr.abs().sum() > 0), n
