"""Control: a layer whose weight is made symmetric by torch.nn.utils.parametrize
(register_parametrization with X.triu() + X.triu(1).T), trained with SGD over
model.parameters().  The gradient reaches the unconstrained parametrizations.weight.original,
the optimizer steps it, and the weight recomputed from it is still symmetric.

Source: https://discuss.pytorch.org/t/are-parametrizations-registered-by-autograd/204301
("Does autograd compute gradients for the parametrized factors?  That is, do optimization
steps keep the layer symmetric?"; the answer: "the gradients will indeed 'flow' all the way to
the new Parameters (before the parametrization is applied) ... your parametrization will
re-run after the update and thus the property provided by it will be preserved").
"""

import torch
from scenario_kit import CLAIMS_NO_ZERO_GRAD, CLAIMS_NONFINITE, HEALTHY_OK, Run
from torch import nn
from torch.nn import functional as F
from torch.nn.utils import parametrize

SOURCE = "https://discuss.pytorch.org/t/are-parametrizations-registered-by-autograd/204301"
DESCRIPTION = "control: symmetric parametrization, SGD: original gets grad, weight stays symmetric"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_NO_ZERO_GRAD,
    r"not (held )?in (the|any) optimizer",
    r"no optimizer",
    r"replaced after",
    r"never called",
    r"no gradient",
]


class Symmetric(nn.Module):
    def forward(self, X):
        return X.triu() + X.triu(1).transpose(-1, -2)


def step(watch):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(6, 6), nn.Tanh(), nn.Linear(6, 2))
    parametrize.register_parametrization(model[0], "weight", Symmetric())
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    g = torch.Generator().manual_seed(1)
    x, y = torch.randn(16, 6, generator=g), torch.randn(16, 2, generator=g)
    original = model[0].parametrizations.weight.original
    before = original.detach().clone()
    with watch(model) as w:
        opt.zero_grad()
        loss = F.mse_loss(model(x), y)
        loss.backward()
        grad = original.grad.clone()
        opt.step()
    return Run(w=w, model=model, original=original, before=before, grad=grad)


def truth(run):
    assert bool(run.grad.abs().sum() > 0)
    assert torch.allclose(run.original.detach(), run.before - 0.1 * run.grad)
    weight = run.model[0].weight.detach()
    assert torch.equal(weight, weight.T)  # still symmetric after the step
