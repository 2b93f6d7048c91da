"""The control of ``sinkhorn_plain_domain_small_eps_nan``: the same generator, targets and
``epsilon = 0.01``, with the Sinkhorn iterations run on the dual potentials in log space
(``f = -eps * logsumexp((g - C) / eps + log b)`` and its mirror) and the cost read from the dual,
``<a, f> + <b, g>``.  ``exp(-C / eps)`` is never formed (it would still be all zeros): every
quantity stays finite and every gradient is finite and nonzero.

Source: https://mathlab.github.io/PINA/_rst/loss/sinkhorn_loss.html ("The Sinkhorn iterations
compute the optimal dual potentials f* and g* in log space. The regularized optimal transport cost
is then recovered from the dual formulation as: W_eps = <a, f*> + <b, g*>"; ``SinkhornLoss(p=2,
eps=0.1, iterations=100)``).  Adapted: the bug's generator and data at ``eps = 0.01``, the
iterations written out in PyTorch.
"""

import torch
from case_r24_sinkhorn_plain_domain_small_eps_nan import sinkhorn_log
from case_r24_sinkhorn_plain_domain_small_eps_nan import step as _step
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = "https://mathlab.github.io/PINA/_rst/loss/sinkhorn_loss.html"
DESCRIPTION = "control: log-domain Sinkhorn at eps=0.01: finite loss and gradients"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [CLAIMS_NONFINITE, CLAIMS_ERROR, r"\bdead\b", r"all[- ]zero", r"underflow\w*"]


def step(watch):
    return _step(watch, ot=sinkhorn_log)


def truth(run):
    assert float(run.cost.min()) > 4.0 and bool((run.kernel == 0).all())  # the same underflow
    assert bool(torch.isfinite(run.loss))
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
