"""Control: the same point-cloud decoder with the symmetric Chamfer loss, both terms: each target
point's squared distance to its nearest prediction plus each predicted point's squared distance to
its nearest target.  Every predicted point is pulled by the second term, so every row of the
output layer gets a nonzero gradient (the first term still reaches only the chosen points); all
gradients are finite and nonzero on both steps.

Source: https://parkcheolhee-lab.github.io/chamfer-distance (its normalised form, "Chamfer
Distance(P, Q) = 1/|P| sum_{p in P} min_{q in Q} ||p - q||^2 + 1/|Q| sum_{q in Q} min_{p in P}
||q - p||^2").
"""

import torch
from case_r12_chamfer_one_sided import POINTS, rows
from case_r12_chamfer_one_sided import step as _step
from scenario_kit import CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = "https://parkcheolhee-lab.github.io/chamfer-distance"
DESCRIPTION = "control: symmetric Chamfer loss: every predicted point and output row gets gradient"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    r"all-zero",
    r"\bzero gradient",
    r"no gradient",
    r"dead (units?|relu|neurons?)",
]


def step(watch):
    return _step(watch, symmetric=True)


def truth(run):
    assert len(set(run.nearest[0].tolist())) < POINTS  # the first term alone would leave some out
    for grads in run.grads:
        w, b = grads["2.weight"], grads["2.bias"]
        for k in range(POINTS):
            assert bool(rows(w, k).abs().sum() > 0) and bool(rows(b, k).abs().sum() > 0), k
        for n, gr in grads.items():
            assert bool(torch.isfinite(gr).all()) and bool(gr.abs().sum() > 0), n
