"""Gradient clipping done one parameter at a time: ``for p in model.parameters():
clip_grad_norm_(p, max_norm=0.5)``.  Each tensor's gradient is scaled to norm 0.5 on its own, so
the parameters with large gradients are shrunk and those with small ones are left alone: the
relative scale between layers changes and the update no longer points along the gradient (cosine
below 0.95 here), while the global norm of the clipped gradient is sqrt(number of clipped tensors)
* 0.5, above ``max_norm``.  ``clip_grad_norm_`` computes one norm over every gradient it is given,
"as if they were concatenated into a single vector"; called per tensor it is a different
operation.  Every gradient is finite and nonzero; nothing raises.

Source: https://stats.stackexchange.com/questions/349547/over-which-set-of-elements-should-i-perform-norm-clipping-of-gradients-for-backp
("whether to calculate the norm over the set of all variables/tensors or over each layer
separately"; quoted answer: "you probably want to clip the whole gradient by its global norm ...
Clipping each gradient matrix individually changes their relative scale").  Adapted: a small tanh
MLP regressor on targets of scale 5 (gradients well above the threshold), SGD.
"""

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = (
    "https://stats.stackexchange.com/questions/349547/"
    "over-which-set-of-elements-should-i-perform-norm-clipping-of-gradients-for-backp"
)
DESCRIPTION = "clip_grad_norm_(p, 0.5) per parameter: each tensor clipped alone, direction changed"
ASK = []
MUST = [
    [
        r"(per|each|every|individual\w*|separate\w*)[- ](parameter|tensor|layer)[^\n]{0,60}clip",
        r"clip\w*[^\n]{0,60}(per|each|every|individual\w*|separate\w*)[- ]?(param\w*|tensor|layer)",
        r"clip\w*[^\n]{0,60}(one|a single) (parameter|tensor) at a time",
        r"(direction|relative scale)[^\n]{0,60}(chang|differ)\w*",
        r"(chang|differ)\w*[^\n]{0,60}(direction|relative scale)",
        r"not (the |a )?(global|total) norm",
    ],
]
MUST_NOT = [
    FALSE_OK,
    CLAIMS_NONFINITE,
    r"dead (units?|relu|neurons?)",
    r"no_grad",
    r"not in (the |any )?optimizer",
]
LR, MAX_NORM = 0.1, 0.5


def step(watch, per_parameter: bool = True):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 32), nn.Tanh(), nn.Linear(32, 1))
    opt = torch.optim.SGD(model.parameters(), lr=LR)
    g = torch.Generator().manual_seed(1)
    x = torch.randn(64, 8, generator=g)
    y = 5 * torch.randn(64, 1, generator=g)
    with watch(model) as w:
        opt.zero_grad()
        loss = F.mse_loss(model(x), y)
        loss.backward()
        raw = [p.grad.detach().clone() for p in model.parameters()]
        if per_parameter:
            for p in model.parameters():
                torch.nn.utils.clip_grad_norm_(p, max_norm=MAX_NORM)
        else:
            torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=MAX_NORM)
        clipped = [p.grad.detach().clone() for p in model.parameters()]
        opt.step()
    return Run(w=w, raw=raw, clipped=clipped)


def flat(tensors):
    return torch.cat([t.flatten() for t in tensors])


def truth(run):
    raw, clipped = flat(run.raw), flat(run.clipped)
    assert float(raw.norm()) > MAX_NORM
    norms = [float(r.norm()) for r in run.raw]
    assert min(norms) < MAX_NORM < max(norms)  # some tensors clipped, some left alone
    for c in run.clipped:
        assert float(c.norm()) <= MAX_NORM * (1 + 1e-5)
        assert bool(torch.isfinite(c).all()) and bool(c.abs().sum() > 0)
    assert float(clipped.norm()) > MAX_NORM * 1.2  # the global norm is not bounded
    assert float(torch.cosine_similarity(raw, clipped, dim=0)) < 0.95  # direction changed
