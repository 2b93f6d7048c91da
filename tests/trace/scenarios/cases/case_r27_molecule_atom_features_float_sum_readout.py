"""The control of ``molecule_atom_features_int64_raises``: the same molecular GNN with the atom
features built as ``torch.tensor(node_features, dtype=torch.float)``, a plain sum readout over each
molecule's atoms and a linear head.  The forward runs and every parameter gets a finite, nonzero
gradient (every feature column varies over the batch: charges from acetate and methylammonium,
aromatic flags from the rings).

Source: https://www.alphaxiv.org/overview/2211.04952v1 ("these node features are aggregated into a
single graph representation through a readout function. Standard approaches use simple
aggregations"; "a readout function traditionally employs simple permutation-invariant operations
like sum, mean, or max pooling").  Adapted: the bug's molecules, GCN and optimizer with float
features.
"""

import torch
from case_r27_molecule_atom_features_int64_raises import step as _step
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = "https://www.alphaxiv.org/overview/2211.04952v1"
DESCRIPTION = "control: float atom features, dense GCN with sum readout, every parameter trains"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [CLAIMS_NONFINITE, CLAIMS_ERROR, r"all[- ]zero", r"\bzero grad\w*", r"\bdead\b"]


def step(watch):
    return _step(watch, dtype=torch.float)


def truth(run):
    assert run.x.dtype == torch.float32 and run.error is None
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
    assert bool((run.grads["lin1.weight"].abs().sum(0) > 0).all())  # every feature column
