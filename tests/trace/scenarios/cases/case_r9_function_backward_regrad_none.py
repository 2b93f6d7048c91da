"""A custom ``autograd.Function`` layer whose ``backward`` recomputes its output and calls
``torch.autograd.grad`` on it, as the issue does.  Inside ``backward`` autograd is off, so the
recomputed output has no graph; setting ``requires_grad = True`` on it makes it a new leaf, and
``autograd.grad(..., allow_unused=True)`` returns None for the input and for the weight.  The
layer's weight (an ``nn.Parameter`` of the model) gets no gradient and never trains; only the head
above it does.

Source: https://github.com/pytorch/pytorch/issues/45405 ("why the following autograd.grad()
return None?": ``out = torch.sum(x0 * w)`` recomputed in ``backward``, ``out.requires_grad = True``,
``dfdw = torch.autograd.grad(outputs=out, inputs=w, grad_outputs=grad_output,
allow_unused=True)``, printing ``(None,) (None,)``).  The step makes ``w`` a parameter and the
layer the model's first.
"""

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn


class RegradMatmul(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x0, w):
        ctx.save_for_backward(w, x0)
        return x0 @ w

    @staticmethod
    def backward(ctx, grad_output):
        w, x0 = ctx.saved_tensors
        out = x0 @ w  # autograd is off here: no graph
        out.requires_grad = True
        x0.requires_grad = True
        dfdx = torch.autograd.grad(out, x0, grad_outputs=grad_output, allow_unused=True)
        dfdw = torch.autograd.grad(out, w, grad_outputs=grad_output, allow_unused=True)
        return dfdx[0], dfdw[0]


class ExplicitMatmul(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x0, w):
        ctx.save_for_backward(w, x0)
        return x0 @ w

    @staticmethod
    def backward(ctx, grad_output):
        w, x0 = ctx.saved_tensors
        grad_x = grad_output @ w.t() if ctx.needs_input_grad[0] else None
        grad_w = x0.t() @ grad_output if ctx.needs_input_grad[1] else None
        return grad_x, grad_w


SOURCE = "https://github.com/pytorch/pytorch/issues/45405"
DESCRIPTION = (
    "custom Function backward re-grads a graphless recompute: returns None, w never trains"
)
ASK = ["w"]
MUST = [
    [
        r"autograd\.Function",
        r"custom (autograd )?function",
        r"RegradMatmul",
        r"backward[^\n]{0,40}(returned|returns|gave) None",
    ]
]
MUST_NOT = [FALSE_OK, CLAIMS_NONFINITE, r"not (held|in)[^\n]{0,30}optimi[sz]er"]


class Net(nn.Module):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn
        self.w = nn.Parameter(torch.randn(5, 8) * 0.3)
        self.head = nn.Linear(8, 1)

    def forward(self, x):
        return self.head(torch.tanh(self.fn.apply(x, self.w)))


def step(watch, fn=RegradMatmul):
    torch.manual_seed(0)
    model = Net(fn)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    g = torch.Generator().manual_seed(1)
    x, y = torch.randn(16, 5, generator=g), torch.randn(16, 1, generator=g)
    # the gradient of the same loss through plain x @ w (no custom Function), for the truth
    w_ref = model.w.detach().clone().requires_grad_(True)
    pred = nn.functional.linear(
        torch.tanh(x @ w_ref), model.head.weight.detach(), model.head.bias.detach()
    )
    nn.functional.mse_loss(pred, y).backward()
    w0 = model.w.detach().clone()
    with watch(model) as w:
        optimizer.zero_grad()
        nn.functional.mse_loss(model(x), y).backward()
        optimizer.step()
    return Run(
        w=w,
        w_grad=model.w.grad,
        ref_grad=w_ref.grad,
        head_grad=model.head.weight.grad,
        w0=w0,
        w1=model.w.detach().clone(),
    )


def truth(run):
    assert run.w_grad is None
    assert torch.equal(run.w0, run.w1)
    assert run.head_grad is not None and bool(run.head_grad.abs().sum() > 0)
