"""Control: a Linear under torch.nn.utils.parametrizations.weight_norm: the trained parameters
are ``parametrizations.weight.original0`` (g) and ``original1`` (v); ``weight`` is recomputed
from them at every forward.  Both get gradients and move.

Source: https://pytorch.org/docs/main/generated/torch.nn.utils.parametrizations.weight_norm.html
(no bug thread was found for the query "parametrization gradient"; this is the documented use).
"""

import torch
from scenario_kit import CLAIMS_NONFINITE, HEALTHY_OK, Run
from torch import nn
from torch.nn import functional as F
from torch.nn.utils.parametrizations import weight_norm

SOURCE = "https://pytorch.org/docs/main/generated/torch.nn.utils.parametrizations.weight_norm.html"
DESCRIPTION = "control: weight_norm parametrization; original0/original1 get grads and move"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    r"original[01][^\n]*(no gradient|\bNone\b)",
    r"re-?created",
    r"new nn\.Parameter",
]


def step(watch):
    torch.manual_seed(0)
    model = nn.Sequential(weight_norm(nn.Linear(6, 8)), nn.Tanh(), nn.Linear(8, 1))
    x, y = torch.randn(16, 6), torch.randn(16, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    p = model[0].parametrizations.weight
    before = (p.original0.detach().clone(), p.original1.detach().clone())
    with watch(model) as w:
        opt.zero_grad()
        loss = F.mse_loss(model(x), y)
        loss.backward()
        opt.step()
    return Run(w=w, model=model, before=before)


def truth(run):
    p = run.model[0].parametrizations.weight
    for t, b in zip((p.original0, p.original1), run.before, strict=True):
        assert t.grad is not None and bool(torch.isfinite(t.grad).all())
        assert not torch.equal(t.detach(), b)
