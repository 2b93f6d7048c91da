"""Control: a training function compiled whole with ``torch.compile``, the loss and its
``loss.backward()`` inside it, as the compiled-autograd tutorial writes it (``@torch.compile def
train(model, x): loss = model(x).sum(); loss.backward()``); the optimizer step runs outside, two
iterations.  Dynamo breaks the graph at ``backward()``; the gradients are the eager ones (checked
against an uncompiled copy of the model) and every parameter trains.

Source: https://github.com/pytorch/tutorials/pull/3026 ("Add compiled autograd tutorial": "We
define the training loop function ``train`` and decorate it with @torch.compile ... Python
Interpreter executes ``loss.backward()``").  Adapted: ``backend="eager"`` (Dynamo's capture
without Inductor's code generation, which takes tens of seconds here) and no compiled autograd.
"""

import copy

import torch
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK, Run
from torch import nn

SOURCE = "https://github.com/pytorch/tutorials/pull/3026"
DESCRIPTION = "control: @torch.compile(backend='eager') train fn with loss.backward() inside"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_ERROR,
    CLAIMS_NONFINITE,
    r"no gradient",
    r"no backward",
    r"never (ran|called)",
]


def step(watch):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(10, 32), nn.Tanh(), nn.Linear(32, 1))
    eager = copy.deepcopy(model)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    eager_opt = torch.optim.SGD(eager.parameters(), lr=0.01)

    @torch.compile(backend="eager")
    def train(model, x):
        loss = model(x).sum()
        loss.backward()
        return loss

    g = torch.Generator().manual_seed(1)
    xs = [torch.randn(8, 10, generator=g) for _ in range(2)]
    grads, eager_grads = [], []
    with watch(model) as w:
        for x in xs:
            opt.zero_grad()
            train(model, x)
            grads.append([p.grad.clone() for p in model.parameters()])
            opt.step()
    for x in xs:
        eager_opt.zero_grad()
        eager(x).sum().backward()
        eager_grads.append([p.grad.clone() for p in eager.parameters()])
        eager_opt.step()
    return Run(w=w, grads=grads, eager_grads=eager_grads)


def truth(run):
    for step_grads, step_eager in zip(run.grads, run.eager_grads, strict=True):
        for g, e in zip(step_grads, step_eager, strict=True):
            assert bool(g.abs().sum() > 0) and torch.allclose(g, e, atol=1e-6)
