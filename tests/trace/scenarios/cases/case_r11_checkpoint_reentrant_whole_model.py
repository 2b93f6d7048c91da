"""The whole network is wrapped in reentrant activation checkpointing, ``checkpoint(self.body, x,
use_reentrant=True)``, and its only input is the data batch, which does not require grad.  The
reentrant checkpoint's output requires grad only when one of its tensor inputs does: here none
does (torch warns "None of the inputs have requires_grad=True. Gradients will be None"), the
prediction and the loss have no graph, and ``loss.backward()`` raises "element 0 of tensors does
not require grad and does not have a grad_fn" inside the block.  No parameter gets a gradient.

Source: https://github.com/pytorch/pytorch/issues/7617 ("checkpoint(function, *args) should has
the same requires_grad as function(*args)": "if the all the inputs have requires_grad to be False,
the output will also checkpoint(...) will also have requires_grad to be False.  While function may
involve other trainable parameters").
"""

import warnings

import torch
from scenario_kit import FALSE_OK, Run
from torch import nn
from torch.nn import functional as F
from torch.utils.checkpoint import checkpoint

SOURCE = "https://github.com/pytorch/pytorch/issues/7617"
DESCRIPTION = "whole model under checkpoint(use_reentrant=True), input no grad: backward raises"
ASK = []
MUST = [
    [r"\braised\b", r"exception", r"\berror\b", r"RuntimeError", r"does not require grad"],
    [r"checkpoint"],
    [
        r"reentrant",
        r"inputs?[^\n]{0,40}(require|requires|requiring)[_ ]grad",
        r"requires_grad",
        r"no (graph|grad_fn)",
    ],
]
MUST_NOT = [FALSE_OK]


class Net(nn.Module):
    def __init__(self, reentrant: bool):
        super().__init__()
        self.reentrant = reentrant
        self.body = nn.Sequential(
            nn.Linear(8, 32), nn.Tanh(), nn.Linear(32, 32), nn.Tanh(), nn.Linear(32, 1)
        )

    def forward(self, x):
        return checkpoint(self.body, x, use_reentrant=self.reentrant)


def step(watch, reentrant: bool = True):
    torch.manual_seed(0)
    model = Net(reentrant)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    g = torch.Generator().manual_seed(1)
    x, y = torch.randn(16, 8, generator=g), torch.randn(16, 1, generator=g)
    error, pred = None, None
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        try:
            with watch(model) as w:
                opt.zero_grad()
                pred = model(x)
                loss = F.mse_loss(pred, y)
                loss.backward()
                opt.step()
        except RuntimeError as e:
            error = e
    messages = [str(s.message) for s in seen]
    grads = [p.grad for p in model.parameters()]
    return Run(
        w=w, error=error, grads=grads, messages=messages, pred_requires_grad=pred.requires_grad
    )


def truth(run):
    assert run.error is not None and "does not require grad" in str(run.error)
    assert not run.pred_requires_grad
    assert any("None of the inputs have requires_grad=True" in m for m in run.messages)
    assert all(g is None for g in run.grads)
