"""Control: a step in the stochastic-weight-averaging phase of training: SGD steps the model,
``swa_model.update_parameters(model)`` folds the new weights into the running average held by an
``AveragedModel`` (a copy of the model, outside the optimizer), and ``SWALR`` sets the learning
rate.  The watched model trains as usual; the averaged copy is updated without gradients, as
designed.

Source: https://pytorch.org/blog/pytorch-1.6-now-includes-stochastic-weight-averaging/ ("a
simple new technique now natively supported in PyTorch 1.6, Stochastic Weight Averaging (SWA)";
"SWA performs an equal average of the weights traversed by SGD with a modified learning rate
schedule", from its earlier post).
"""

import torch
from scenario_kit import CLAIMS_NO_ZERO_GRAD, CLAIMS_NONFINITE, HEALTHY_OK, Run
from torch import nn
from torch.nn import functional as F
from torch.optim.swa_utils import SWALR, AveragedModel

SOURCE = "https://pytorch.org/blog/pytorch-1.6-now-includes-stochastic-weight-averaging/"
DESCRIPTION = "control: SWA phase: SGD step, AveragedModel.update_parameters, SWALR.step"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_NO_ZERO_GRAD,
    r"not (held|in (the|any) optimizer)",
    r"no optimizer",
    r"did(n't| not) (move|change)",
    r"(updated|stepped|moved) twice",
]


def _batches(n):
    g = torch.Generator().manual_seed(1)
    return [
        (torch.randn(16, 8, generator=g), torch.randint(0, 3, (16,), generator=g)) for _ in range(n)
    ]


def step(watch):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 3))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    swa_model = AveragedModel(model)
    swa_scheduler = SWALR(opt, swa_lr=0.05)
    *warm, last = _batches(4)
    for x, y in warm:  # earlier SWA epochs, unwatched
        opt.zero_grad()
        F.cross_entropy(model(x), y).backward()
        opt.step()
        swa_model.update_parameters(model)
        swa_scheduler.step()
    x, y = last
    before = [p.detach().clone() for p in model.parameters()]
    avg_before = [p.detach().clone() for p in swa_model.module.parameters()]
    n_before = int(swa_model.n_averaged)
    with watch(model) as w:
        opt.zero_grad()
        F.cross_entropy(model(x), y).backward()
        opt.step()
        swa_model.update_parameters(model)
        swa_scheduler.step()
    return Run(w=w, model=model, swa=swa_model, before=before, avg_before=avg_before, n=n_before)


def truth(run):
    for p, b in zip(run.model.parameters(), run.before, strict=True):
        assert p.grad is not None and bool(p.grad.abs().sum() > 0)
        assert not torch.equal(p.detach(), b)
    # the running average: avg + (new - avg) / (n + 1)
    for a, a0, p in zip(
        run.swa.module.parameters(), run.avg_before, run.model.parameters(), strict=True
    ):
        assert a.grad is None
        assert torch.allclose(a.detach(), a0 + (p.detach() - a0) / (run.n + 1), atol=1e-6)
