"""The control of ``schnet_broadcast_sqrt_distance``: the same SchNet energy-and-force step with the
distances computed only for the pairs of a neighbour list that leaves out ``i = j`` (then scattered
into the ``(atoms, atoms)`` layout, the diagonal a constant 0): no square root is taken at 0, the
forces ``-dE/dR`` are finite, and every parameter gets a finite, nonzero gradient through the energy
and the force terms.

Source: https://www.sciencestack.ai/paper/1706.08566 ("It introduces continuous-filter convolutions
and the SchNet architecture, which yields rotation-invariant energies and energy-conserving,
differentiable force fields by training on both energies and forces"; "The work enables fast,
differentiable PES modeling suitable for geometry optimization and molecular dynamics").  Adapted:
the bug's model, molecules and optimizer with a neighbour list.
"""

import math

import torch
from case_r31_schnet_broadcast_sqrt_distance import step as _step
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = "https://www.sciencestack.ai/paper/1706.08566"
DESCRIPTION = "control: SchNet distances over a neighbour list without i = j: finite forces"
ASK = []
MUST = [[HEALTHY_OK, r"create_graph|second[- ]order|double[- ]backward|higher[- ]order"]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    r"\bdead\b",
    r"all[- ]zero",
    r"not in (the |any )?optimi[sz]er",
]


def step(watch):
    return _step(watch, all_pairs=False)


def truth(run):
    assert bool(torch.isfinite(run.e).all()) and bool(torch.isfinite(run.f).all())
    assert math.isfinite(run.loss)
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
