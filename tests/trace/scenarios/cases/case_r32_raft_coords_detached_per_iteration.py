"""The control of ``raft_correlation_under_no_grad``, a healthy step that could look suspicious: the
same small RAFT with the correlation volume built with its graph, and, as RAFT does, the flow
estimate detached at the start of every refinement iteration (``coords1 = coords1.detach()``), so
that no gradient flows from one iteration's flow into the next; each iteration's loss term still
reaches the update operator, the context encoder and, through the correlation lookups, the feature
encoder.  Every parameter gets a finite, nonzero gradient.

Source: https://www.engineermaxxing.com/veanors/papers/raft.html ("Estimate dense optical flow by
building a 4D correlation volume over all pixel pairs, then iteratively refining the flow field with
a lightweight GRU — 12 identical update steps that mimic first-order optimization"; "Feature encoder
g_theta produces per-pixel features [H/8, W/8, 256] for both images → Context encoder h_theta
extracts features from I").  Adapted: the bug's model, data and optimizer with the volume's graph
kept.
"""

import torch
from case_r32_raft_correlation_under_no_grad import step as _step
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = "https://www.engineermaxxing.com/veanors/papers/raft.html"
DESCRIPTION = "control: RAFT with the correlation volume's graph kept, flow detached per iteration"
ASK = []
MUST = [[HEALTHY_OK, r"detach\w*[^\n]{0,80}(intended|deliberate|on purpose|by design|as RAFT)"]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    r"\bdead\b",
    r"all[- ]zero",
    r"no_grad",
    r"not in (the |any )?optimi[sz]er",
]


def step(watch):
    return _step(watch, corr_grad=True)


def truth(run):
    for n, g in run.grads.items():
        assert g is not None and bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
