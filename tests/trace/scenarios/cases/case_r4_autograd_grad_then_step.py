"""The gradients are taken with ``torch.autograd.grad(loss, model.parameters())`` (to log their
norms) instead of ``loss.backward()``, and ``optimizer.step()`` follows.  ``autograd.grad``
returns the gradients and does not accumulate them into ``.grad``: every ``.grad`` is None at
the step, which skips every parameter -- nothing moves.

Source: https://pytorch.org/docs/1.10.1/generated/torch.autograd.grad.html ("inputs (sequence of
Tensor) - Inputs w.r.t. which the gradient will be returned (and not accumulated into .grad)";
"To accumulate gradient for other parts of the graph, please use torch.autograd.backward").
"""

import torch
from scenario_kit import FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://pytorch.org/docs/1.10.1/generated/torch.autograd.grad.html"
DESCRIPTION = "grads from torch.autograd.grad, then opt.step(): every .grad None, nothing moves"
ASK = ["0.weight"]
MUST = [
    [
        r"autograd\.grad",
        r"\bNone\b",
        r"no (\.grad|gradient)",
        r"without (a )?gradient",
        r"not (accumulated|stored|written)",
    ],
    [
        r"did(n't| not) (move|change)",
        r"unchanged",
        r"not (moved|changed|updated)",
        r"skip",
        r"(step|optimizer)[^\n]{0,40}(nothing|no effect)",
    ],
]
MUST_NOT = [FALSE_OK]


def step(watch, assign=False):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 3))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    g = torch.Generator().manual_seed(1)
    x, y = torch.randn(16, 6, generator=g), torch.randint(0, 3, (16,), generator=g)
    before = [p.detach().clone() for p in model.parameters()]
    with watch(model) as w:
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        params = list(model.parameters())
        grads = torch.autograd.grad(loss, params)
        norms = [float(gr.norm()) for gr in grads]  # logged
        if assign:
            for p, gr in zip(params, grads, strict=True):
                p.grad = gr
        at_step = [p.grad is None for p in params]
        opt.step()
    return Run(w=w, model=model, before=before, norms=norms, none_at_step=at_step)


def truth(run):
    assert all(n > 0 for n in run.norms)
    assert all(run.none_at_step)
    for p, b in zip(run.model.parameters(), run.before, strict=True):
        assert p.grad is None and torch.equal(p.detach(), b)
