"""``torch.nn.utils.weight_norm`` applied to the first layer after the optimizer was built.
Weight norm replaces the parameter ``weight`` by two new parameters, ``weight_g`` and
``weight_v``; the optimizer still holds the old ``weight``, which is no longer a parameter of the
model and gets no gradient.  ``weight_g`` and ``weight_v`` get gradients every step and never
move (the bias, held by the optimizer, still trains).

Source: https://pytorch.org/docs/main/generated/torch.nn.utils.weight_norm.html ("This replaces
the parameter specified by name (e.g. 'weight') with two parameters: one specifying the magnitude
(e.g. 'weight_g') and one specifying the direction (e.g. 'weight_v')").  The deprecated function's
FutureWarning is silenced, as a script would print it and go on.
"""

import warnings

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn

SOURCE = "https://pytorch.org/docs/main/generated/torch.nn.utils.weight_norm.html"
DESCRIPTION = "weight_norm applied after the optimizer: weight_g/weight_v get .grad, never move"
ASK = ["0.weight_v"]
MUST = [
    [
        r"no optimizer",
        r"not (held|in|part of)[^\n]{0,40}optimi[sz]er",
        r"optimi[sz]er[^\n]{0,60}(does not|doesn't|never) hold",
        r"(never|not) (moved|updated|stepped)",
    ],
    [r"weight_[gv]"],
]
MUST_NOT = [FALSE_OK, CLAIMS_NONFINITE]


def step(watch, norm_first: bool = False):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(6, 8), nn.Tanh(), nn.Linear(8, 1))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if norm_first:
            nn.utils.weight_norm(model[0])
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        if not norm_first:
            nn.utils.weight_norm(model[0])
    g = torch.Generator().manual_seed(1)
    x, y = torch.randn(32, 6, generator=g), torch.randn(32, 1, generator=g)
    before = {n: p.detach().clone() for n, p in model.named_parameters()}
    with watch(model) as w:
        for _ in range(2):
            optimizer.zero_grad()
            nn.functional.mse_loss(model(x), y).backward()
            optimizer.step()
    held = {id(p) for group in optimizer.param_groups for p in group["params"]}
    return Run(
        w=w,
        before=before,
        after={n: p.detach().clone() for n, p in model.named_parameters()},
        grads={n: p.grad for n, p in model.named_parameters()},
        held={n: id(p) in held for n, p in model.named_parameters()},
    )


def truth(run):
    for n in ("0.weight_g", "0.weight_v"):
        assert run.grads[n] is not None and bool(run.grads[n].abs().sum() > 0), n
        assert not run.held[n], n
        assert torch.equal(run.before[n], run.after[n]), n
    assert not torch.equal(run.before["0.bias"], run.after["0.bias"])
