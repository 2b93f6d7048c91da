"""A training loop written in the functional style: the parameters are taken out of the model as
detached copies (``{name: p.detach().clone().requires_grad_()}``), the forward runs through
``torch.func.functional_call(model, params, x)`` and the optimizer updates the copies.  The
copies train; the model's own parameters get no gradient and never move, so the model the user
evaluates and saves afterwards is the initial one.

Source: https://github.com/pytorch/functorch/issues/280 ("How to update the original model
parameters after calling make_functional?"; "updating the tensors pointed by the params returned
by make_functional does not update the real parameters in the original model").
``make_functional`` is gone from torch 2.13; ``torch.func.functional_call`` on a dict of copies is
its replacement (pytorch/pytorch#88851).
"""

import torch
from scenario_kit import FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://github.com/pytorch/functorch/issues/280"
DESCRIPTION = "functional_call on detached copies, optimizer on the copies: model params never move"
ASK = ["0.weight"]
MUST = [
    [
        r"functional_call",
        r"cop(y|ies)",
        r"clone",
        r"not (the )?parameters of (the )?model",
        r"without being parameters",
        r"feed the forward",
        r"in place of",
    ],
    [
        r"no gradient",
        r"\bNone\b",
        r"(did not|never|didn't) (reach|get|receive)",
        r"nothing reached",
        r"never (moved|updated|changed)",
    ],
]
MUST_NOT = [FALSE_OK]


def make():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 16), nn.Tanh(), nn.Linear(16, 5))
    g = torch.Generator().manual_seed(1)
    x, y = torch.randn(2, 3, generator=g), torch.randn(2, 5, generator=g)
    return model, x, y


def step(watch, copies: bool = True):
    model, x, y = make()
    before = {n: p.detach().clone() for n, p in model.named_parameters()}
    if copies:
        params = {n: p.detach().clone().requires_grad_() for n, p in model.named_parameters()}
    else:
        params = dict(model.named_parameters())
    opt = torch.optim.SGD(params.values(), lr=0.1)
    with watch(model) as w:
        opt.zero_grad()
        out = torch.func.functional_call(model, params, (x,))
        F.mse_loss(out, y).backward()
        opt.step()
    return Run(w=w, model=model, params=params, before=before)


def truth(run):
    for n, p in run.model.named_parameters():
        assert p.grad is None, n  # the model's own parameters got nothing ...
        assert torch.equal(p.detach(), run.before[n]), n  # ... and never moved
        copy = run.params[n]
        assert copy is not p and copy.grad is not None  # the copies trained instead
        assert not torch.equal(copy.detach(), run.before[n]), n
