"""The control of ``kan_raw_inputs_outside_spline_grid``: the same KAN ``[3, 5, 1]`` trained on the
standardised readings (zero mean, unit variance per column), which lie inside the splines' support
[-2.2, 2.2], as do the first layer's outputs.  Every B-spline basis sees inputs; every parameter
tensor, both layers' spline coefficients included, gets a finite, nonzero gradient and moves (one
basis of the second layer, at the grid's edge, sees no input: 1 of its 40 coefficients gets zero
gradient, as any spline beyond its data would).

Source: http://sscardapane.notion.site/b3749e1fd48d4bfdb78f5b05d45b5f1b ("A spline function of order
n is defined by first dividing the domain into k intervals"; "These intervals are described by a
grid of k+1 points on the x-axis called knots"; "For order 0, the B-spline is simply 1 over the
corresponding interval"; "the Cox-de Boor recursion formula").  Adapted: the bug's network, grid,
data and optimizer with the inputs standardised.
"""

import torch
from case_r28_kan_raw_inputs_outside_spline_grid import b_splines
from case_r28_kan_raw_inputs_outside_spline_grid import step as _step
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = "http://sscardapane.notion.site/b3749e1fd48d4bfdb78f5b05d45b5f1b"
DESCRIPTION = "control: KAN on standardised inputs inside the spline grid: coefficients train"
ASK = []
MUST = [[HEALTHY_OK, r"edge of (the|its) grid|grid'?s? edge"]]
MUST_NOT = [CLAIMS_NONFINITE, CLAIMS_ERROR, r"all[- ]zero", r"\bdead\b", r"outside (the|its) grid"]


def step(watch):
    return _step(watch, standardise=True)


def truth(run):
    assert float(run.x.abs().max()) < 2.2
    assert bool((b_splines(run.x, run.model.layer1.grid) > 0).any(-1).all())
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
        assert not torch.equal(dict(run.model.named_parameters())[n].detach(), run.before[n]), n
    assert int((run.grads["layer1.coef"] == 0).sum()) == 0
