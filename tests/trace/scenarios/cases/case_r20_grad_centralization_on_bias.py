"""Gradient centralization applied to every parameter, biases included: after ``backward()`` each
gradient has its mean subtracted before ``optimizer.step()`` (``g - g.mean(dim=1)`` per weight
vector for matrices, ``g - g.mean()`` for vectors).  For the output layer's bias, one element, the
centralized gradient ``g - mean(g)`` is exactly 0: the output offset never trains, and a regression
whose targets have a mean of about 3 keeps its initial offset; the hidden layer's bias loses its
mean too.  The other gradients are finite and nonzero; nothing raises.

Source: https://ai-solutions.daviesmeyer.com/en/glossary/gradient-centralization ("GC centers
gradients around zero: g = g − mean(g)"; "GC can be layered on any optimizer (1 line of code!)";
"Common Pitfalls: Not suitable for all layer types (exclude bias vectors)").  Adapted: a
``Linear(8, 32)``, ``Tanh``, ``Linear(32, 1)`` regressor on targets ``x . v + 3``, MSE, SGD at
0.05, the one line applied to every ``p.grad`` between ``backward()`` and ``step()``.
"""

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://ai-solutions.daviesmeyer.com/en/glossary/gradient-centralization"
DESCRIPTION = "gradient centralization on biases too: the 1-element output bias's grad becomes 0"
ASK = []
MUST = [
    [
        r"all[- ]zero",
        r"\bzero grad\w*",
        r"gradients? (is |are |was |were )?(exactly )?(all )?(0|zero)",
        r"no gradient",
        r"(did not|didn't|never) (move|change)",
    ],
    [
        r"\bbias",
        r"centrali[sz]\w*",
        r"\bmean\b",
        (
            r"(modified|changed|edited|rewritten|overwrit\w*|zeroed)[^\n]{0,80}"
            r"(after|between|before)[^\n]{0,40}(backward|step)"
        ),
    ],
]
MUST_NOT = [
    FALSE_OK,
    CLAIMS_NONFINITE,
    r"requires_grad\s*(=|is|was)?\s*False",
    r"not in (the |any )?optimi[sz]er",
]


def centralize(model, biases):
    with torch.no_grad():
        for p in model.parameters():
            if p.dim() > 1:
                p.grad -= p.grad.mean(dim=1, keepdim=True)  # each output unit's weight vector
            elif biases:
                p.grad -= p.grad.mean()


def data():
    g = torch.Generator().manual_seed(1)
    x = torch.randn(64, 8, generator=g)
    v = torch.randn(8, generator=g)
    return x, (x @ v + 3).unsqueeze(1)


def step(watch, biases=True):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 32), nn.Tanh(), nn.Linear(32, 1))
    start = {n: p.detach().clone() for n, p in model.named_parameters()}
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    x, y = data()
    with watch(model) as w:
        optimizer.zero_grad()
        loss = F.mse_loss(model(x), y)
        loss.backward()
        raw = {n: p.grad.detach().clone() for n, p in model.named_parameters()}
        centralize(model, biases)
        grads = {n: p.grad.detach().clone() for n, p in model.named_parameters()}
        optimizer.step()
    return Run(w=w, model=model, start=start, raw=raw, grads=grads, biases=biases)


def truth(run):
    assert run.biases
    params = dict(run.model.named_parameters())
    assert abs(float(run.raw["2.bias"])) > 0.5  # the loss does pull the output offset
    assert float(run.grads["2.bias"]) == 0.0  # g - mean(g) of one element
    assert torch.equal(params["2.bias"].detach(), run.start["2.bias"])  # never trains
    assert abs(float(run.grads["0.bias"].sum())) < 1e-6  # the hidden bias lost its mean
    assert abs(float(run.raw["0.bias"].sum())) > 1e-3
    for n in ("0.weight", "0.bias", "2.weight"):
        g = run.grads[n]
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
        assert not torch.equal(params[n].detach(), run.start[n]), n
