"""One-off work of torch's forward mode, done when a compressed Jacobian or Hessian is built.

The first ``torch.func.jvp`` of a process loads torch's forward-mode decompositions
(TorchScript-compiled on import of ``torch._decomp.decompositions_for_jvp``): about 0.1 s,
measured with torch 2.13 on one thread, against 2.6 ms for a cached star Hessian call at
n = 5000.  :func:`forward_mode_ready` does it once, with a one-element ``jvp``, at
construction, so that the first call of a :class:`~gradarg.SparseHessian` (or of a
forward-mode :class:`~gradarg.SparseJacobian`) costs what the next ones cost.
"""

from __future__ import annotations

import torch

_ready = False


def forward_mode_ready() -> None:
    """Load torch's forward-mode machinery once per process (a one-element ``jvp``)."""
    global _ready
    if not _ready:
        torch.func.jvp(torch.sin, (torch.zeros(1),), (torch.ones(1),))
        _ready = True
