"""A regressor whose output ``x`` is turned into a relative position ``c = (x - a) / (b - a)``
between two bounds of each example, with the 0/0 case guarded as the thread suggests:
``torch.where(b - a == 0, 1, (x - a) / (b - a))``.  The forward is finite (``where`` picks 1 on the
8 entries whose bounds coincide), but both branches are computed and backward sends a zero
gradient into the unselected division, where ``d/dx (x - a) / (b - a) = 1 / 0``: ``0 * inf``
(``0 / 0`` in ``DivBackward``) is NaN.  The loss is finite, the output layer's gradient is NaN in
the columns with a coinciding bound and the first layer's everywhere; Adam's step writes NaN into
the weights.

Source: https://discuss.pytorch.org/t/special-treatment-of-0-0/161107 ("How about using
torch.where?  torch.where(a == b , 1 , (x - a) / (b - a) )"; the reply: "torch.where() doesn't
backpropagate nicely when nans and infs occur, even in the 'branch not followed.'  ...  In
instances where a and b are equal, you will get nans or infs").  Adapted: ``x`` is a small MLP's
output, ``a`` and ``b`` are data.
"""

import torch
from scenario_kit import FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://discuss.pytorch.org/t/special-treatment-of-0-0/161107"
DESCRIPTION = "torch.where(b - a == 0, 1, (x - a) / (b - a)): finite loss, NaN gradient (0 * inf)"
ASK = ["0.weight"]
MUST = [
    [
        r"torch\.where",
        r"\bwhere\(",
        r"WhereBackward",
        r"\bwhere_",
        r"unselected",
        r"branch",
        r"masked[- ]out",
    ],
    [
        r"\bdiv\w*",
        r"/ ?\(?b ?- ?a",
        r"0 ?/ ?0",
        r"0 ?\* ?inf",
        r"zero denominator",
        r"(divid\w*|division) by (zero|0)",
    ],
]
MUST_NOT = [
    FALSE_OK,
    r"learning rate (is |was )?too (high|large)",
    r"explod\w*",
    r"nan[^\n]{0,40}(in|from) (the )?(input|data|batch)",
    r"dead (units?|relu|neurons?)",
]


def relative(x, a, b, safe: bool):
    same = (b - a) == 0
    if safe:  # the denominator replaced where it is 0, so neither branch divides by 0
        denom = torch.where(same, torch.ones_like(b), b - a)
        return torch.where(same, torch.ones_like(x), (x - a) / denom)
    return torch.where(same, torch.ones_like(x), (x - a) / (b - a))


def step(watch, safe: bool = False):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(6, 16), nn.Tanh(), nn.Linear(16, 4))
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    g = torch.Generator().manual_seed(1)
    feats = torch.randn(32, 6, generator=g)
    a = torch.randn(32, 4, generator=g)
    b = a + 0.5 + torch.rand(32, 4, generator=g)
    b[::4, 1] = a[::4, 1]  # 8 entries, all in column 1, whose bounds coincide
    target = torch.rand(32, 4, generator=g)
    with watch(model) as w:
        opt.zero_grad()
        c = relative(model(feats), a, b, safe)
        loss = F.mse_loss(c, target)
        loss.backward()
        opt.step()
    grads = {n: p.grad.detach().clone() for n, p in model.named_parameters()}
    params = {n: p.detach().clone() for n, p in model.named_parameters()}
    return Run(w=w, loss=loss.item(), c=c.detach(), grads=grads, params=params)


def truth(run):
    assert bool(torch.isfinite(run.c).all())
    assert run.loss == run.loss and abs(run.loss) < 1e6  # finite loss
    out_w = run.grads["2.weight"]
    assert bool(torch.isnan(out_w[1]).all())  # the column with coinciding bounds
    assert bool(torch.isfinite(out_w[[0, 2, 3]]).all())
    assert bool(torch.isnan(run.grads["0.weight"]).all())
    assert bool(torch.isnan(run.params["0.weight"]).all())
