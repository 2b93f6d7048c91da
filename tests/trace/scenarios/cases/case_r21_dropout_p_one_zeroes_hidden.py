"""A classifier with ``nn.Dropout(p=1.0)`` after its hidden layer, in training mode.  Dropout with
probability 1 drops every unit: the layer's output is all zeros for every example.  Nothing
upstream of it can get a gradient (``0.weight``, ``0.bias``) and the output layer's weight, which
multiplies those zeros, gets an exactly zero gradient too (``3.weight``); only the output bias
learns (the class frequencies).  Nothing raises; nothing is NaN.

Source: https://errorhandle.ai/dropout-behavior-in-keras-with-rate-1-dropping-all-input-units-not-as-expected
("When you set rate=1, it theoretically means that all input units should be dropped out, which
would make the output zero"; "A rate of 1 would prevent learning, defeating the purpose of the
network").  Adapted: the question is about Keras, which did not zero the units at rate 1; torch
does.  ``Linear(10, 5)``, ``Tanh``, ``Dropout(p=1.0)``, ``Linear(5, 3)`` on 128 examples, SGD at
0.1.
"""

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = (
    "https://errorhandle.ai/dropout-behavior-in-keras-with-rate-1-dropping-all-input-units-not-as"
    "-expected"
)
DESCRIPTION = "Dropout(p=1.0) after the hidden layer: all its outputs 0, every grad but 3.bias is 0"
ASK = ["0.weight"]
MUST = [
    [
        r"all[- ]zero",
        r"\bzero grad\w*",
        r"gradients? (is |are |was |were )?(exactly )?(all )?(0|zero)",
        r"no gradient",
    ],
    [r"dropout", r"\bp\s*=\s*1(\.0)?\b", r"probability (of )?1(\.0)?\b", r"drop\w* (all|every)"],
]
MUST_NOT = [
    FALSE_OK,
    CLAIMS_NONFINITE,
    r"requires_grad\s*(=|is|was)?\s*False",
    r"not in (the |any )?optimi[sz]er",
]


def data():
    g = torch.Generator().manual_seed(1)
    x = torch.randn(128, 10, generator=g)
    return x, (x[:, :3] + 0.5 * x[:, 3:6]).argmax(1)


def step(watch, p=1.0):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(10, 5), nn.Tanh(), nn.Dropout(p=p), nn.Linear(5, 3))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = data()
    seen = []
    model[2].register_forward_hook(lambda m, i, o: seen.append((i[0].detach(), o.detach())))
    before = {n: q.detach().clone() for n, q in model.named_parameters()}
    torch.manual_seed(2)  # the dropout mask
    with watch(model) as w:
        optimizer.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        grads = {n: q.grad.detach().clone() for n, q in model.named_parameters()}
        optimizer.step()
    return Run(w=w, model=model, p=p, before=before, grads=grads, seen=seen)


def truth(run):
    assert run.p == 1.0
    hidden, dropped = run.seen[0]
    assert bool((hidden != 0).all()) and bool((dropped == 0).all())  # every unit dropped
    params = dict(run.model.named_parameters())
    for n in ("0.weight", "0.bias", "3.weight"):
        assert bool((run.grads[n] == 0).all()), n
        assert torch.equal(params[n].detach(), run.before[n]), n
    assert bool(run.grads["3.bias"].abs().sum() > 0)  # only the output bias learns
