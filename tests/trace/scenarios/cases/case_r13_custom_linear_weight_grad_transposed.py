"""A hidden layer computed by a custom ``torch.autograd.Function`` in the style of the PyTorch
docs' ``LinearFunction`` (``forward(ctx, x, weight, bias)`` returns ``x @ weight.T + bias``), whose
``backward`` returns the weight's gradient as ``x.T @ grad_output``: the transpose of the right
``grad_output.T @ x``.  The weight is ``(16, 8)``; the returned gradient is ``(8, 16)``, which
cannot be reduced or broadcast to it, and autograd's check of the Function's outputs raises
``RuntimeError: Function LinearFunctionBackward returned an invalid gradient at index 1 - got
[8, 16] but expected shape compatible with [16, 8]`` inside ``loss.backward()``.  The output
layer, reached first by backward, already holds its gradient; the hidden layer gets none and the
step is never taken.

Source: https://git.waymay.us/zhongwei/gh-tachyon-beep-skillpacks-plugins-yzmir-pytorch-engineering/raw/commit/52ec22cfac8965cbbd6156131aed5c4b0b893ba3/skills/using-pytorch-engineering/custom-autograd-functions.md
("how to implement forward and backward passes correctly, mandatory numerical verification with
gradcheck, and common pitfalls that break gradient computation").  Adapted: the pitfall made here
is a weight gradient of the transposed shape.
"""

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run, expect_raise
from torch import nn
from torch.nn import functional as F

SOURCE = (
    "https://git.waymay.us/zhongwei/gh-tachyon-beep-skillpacks-plugins-yzmir-pytorch-engineering/"
    "raw/commit/52ec22cfac8965cbbd6156131aed5c4b0b893ba3/skills/using-pytorch-engineering/"
    "custom-autograd-functions.md"
)
DESCRIPTION = "custom LinearFunction backward returns x.T @ grad (8, 16) for weight (16, 8): raises"
ASK = ["hidden.weight"]
MUST = [
    [
        r"LinearFunction",
        r"custom (autograd )?function",
        r"autograd\.Function",
        r"Function'?s backward",
    ],
    [
        r"invalid gradient",
        r"shape",
        r"\[8, 16\]",
        r"transpos\w*",
        r"raised",
        r"RuntimeError",
    ],
]
MUST_NOT = [FALSE_OK, CLAIMS_NONFINITE, r"no_grad", r"dead (units?|relu|neurons?)"]


def make_function(variant):
    class LinearFunction(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, weight, bias):
            ctx.save_for_backward(x, weight)
            return x @ weight.T + bias

        @staticmethod
        def backward(ctx, grad_output):
            x, weight = ctx.saved_tensors
            grad_x = grad_output @ weight
            # "transposed": the weight's gradient as x.T @ grad_output, of shape (8, 16)
            grad_weight = x.T @ grad_output if variant == "transposed" else grad_output.T @ x
            # "unreduced": the bias gradient left of shape (batch, 16); autograd sums it to (16,)
            grad_bias = grad_output if variant == "unreduced" else grad_output.sum(0)
            return grad_x, grad_weight, grad_bias

    return LinearFunction


class Hidden(nn.Module):
    def __init__(self, variant):
        super().__init__()
        self.fn = make_function(variant)
        self.weight = nn.Parameter(torch.randn(16, 8) / 8**0.5)
        self.bias = nn.Parameter(0.1 * torch.randn(16))

    def forward(self, x):
        return self.fn.apply(x, self.weight, self.bias)


class Net(nn.Module):
    def __init__(self, variant):
        super().__init__()
        self.hidden = Hidden(variant)
        self.out = nn.Linear(16, 1)

    def forward(self, x):
        return self.out(torch.tanh(self.hidden(x)))


def step(watch, variant: str = "transposed"):
    torch.manual_seed(0)
    model = Net(variant)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    g = torch.Generator().manual_seed(1)
    x = torch.randn(32, 8, generator=g)
    y = torch.randn(32, 1, generator=g)
    before = [p.detach().clone() for p in model.parameters()]
    # what autograd gives for the plain x @ W.T + b at the same weights
    params = [p.detach().clone().requires_grad_(True) for p in model.parameters()]
    w_, b_, ow, ob = params
    plain_loss = F.mse_loss(F.linear(torch.tanh(F.linear(x, w_, b_)), ow, ob), y)
    ref = torch.autograd.grad(plain_loss, params)

    def train_step():
        opt.zero_grad()
        loss = F.mse_loss(model(x), y)
        loss.backward()
        opt.step()

    with watch(model) as w:
        error = expect_raise(train_step, RuntimeError)
    grads = {n: p.grad for n, p in model.named_parameters()}
    moved = any(
        not torch.equal(p.detach(), b) for p, b in zip(model.parameters(), before, strict=True)
    )
    return Run(w=w, error=error, grads=grads, ref=ref, moved=moved)


def truth(run):
    assert run.error is not None and "invalid gradient at index 1" in str(run.error)
    assert "[8, 16]" in str(run.error) and "[16, 8]" in str(run.error)
    assert run.grads["hidden.weight"] is None and run.grads["hidden.bias"] is None
    assert run.grads["out.weight"] is not None  # reached before the Function's backward
    assert not run.moved
