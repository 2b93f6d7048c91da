"""A hand-written cosine normalisation h / ||h|| between a ReLU layer and the head: for one
example every ReLU unit is off, ||h|| = 0 and the forward computes 0 / 0 = NaN, which reaches
the output and the loss.  The NaN is made in the model's own forward, by the division, not by a
layer.

Source: https://discuss.pytorch.org/t/how-to-debug-nan-gradients-in-custom-cosine-normalization-implementation/3591
("I end up getting NaNs when calling .backward() ... How can I reliably investigate issues like
this?"; answered: "if x.norm or w.norm is 0 ..."; the user's fix: "Adding an additional + 1.0
to the denominator has been stable").
"""

import torch
from scenario_kit import FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://discuss.pytorch.org/t/how-to-debug-nan-gradients-in-custom-cosine-normalization-implementation/3591"
DESCRIPTION = "h / h.norm() with an all-zero ReLU row: 0/0 NaN made in the forward, before head"
ASK = []
MUST = [
    [r"\bnan\b", r"non-?finite", r"not finite"],
    [r"forward", r"\bnorm", r"divi", r"'head'", r"\bhead\b"],
]
MUST_NOT = [
    FALSE_OK,
    (
        r"(made|produced|created|introduced|originat\w*|starts?|first)\W+(\w+\W+){0,3}"
        r"(in|by|at)\s+(module\s+)?'?(fc|act)'?\b"
    ),
]


class CosNet(nn.Module):
    def __init__(self, eps):
        super().__init__()
        self.fc = nn.Linear(6, 8)
        self.act = nn.ReLU()
        self.head = nn.Linear(8, 2)
        self.eps = eps

    def forward(self, x):
        h = self.act(self.fc(x))
        return self.head(h / (h.norm(dim=1, keepdim=True) + self.eps))


def _batch():
    torch.manual_seed(1)
    x = torch.randn(32, 6)
    x[0] = 0.0  # an all-zero example (padding): with a negative bias every unit is off
    return x, torch.randint(0, 2, (32,))


def step(watch, eps=0.0):
    torch.manual_seed(0)
    model = CosNet(eps)
    with torch.no_grad():
        model.fc.bias.fill_(-0.1)
    x, y = _batch()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    seen = {}
    hook = model.act.register_forward_hook(lambda m, i, o: seen.update(h=o.detach()))
    try:
        with watch(model) as w:
            opt.zero_grad()
            out = model(x)
            loss = F.cross_entropy(out, y)
            loss.backward()
            opt.step()
    finally:
        hook.remove()
    return Run(w=w, model=model, h=seen["h"], out=out.detach(), loss=loss.detach())


def truth(run):
    assert bool((run.h[0] == 0).all()) and bool(torch.isfinite(run.h).all())
    assert bool((run.h.amax(0) > 0).all())  # no unit is off for the whole batch
    assert bool(torch.isnan(run.out[0]).all()) and bool(torch.isfinite(run.out[1:]).all())
    assert bool(torch.isnan(run.loss))
