"""A max-norm weight constraint applied through ``.data`` between the forward and the backward:
after computing the loss, the step rescales every row of the middle layer's weight whose norm exceeds 0.5
with ``model[2].weight.data.mul_(...)``, then calls ``loss.backward()``.  ``.data`` is a view of
the weight's storage with its own version counter, so autograd does not see the edit and nothing
raises: the backward of ``model[2]`` multiplies the upstream gradient by the rescaled weight, not
by the one the forward used.  The first layer's gradients are those of another network than the
one that produced the loss; ``2.weight``'s own gradient (which reads the saved input) and the
last layer's are right.  Unlike round 3's ``detach().div_()`` between the forward and the
backward, which shares the version counter and makes the backward raise, this is silent.  Every
gradient is finite and nonzero.

Source: https://553668.com/manong/1160187.html ("如果我们想要修改tensor的数值,但不希望被autograd记录
(即不会影响反向传播),可以对tensor.data进行操作": to change a tensor's values without autograd
recording it, operate on tensor.data; ``y = 2 * x``, ``x.data *= 100``, ``y.backward()``: "只改变
了值,不会记录在计算图,所以不会影响梯度传播", only the values change, nothing is recorded in the
graph).  Adapted: the edit is a max-norm constraint (rows rescaled to norm 0.5) on the middle
layer of a ``Linear(10, 32), Tanh, Linear(32, 32), Tanh, Linear(32, 3)`` classifier, 128
examples, SGD at 0.1.
"""

import copy

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://553668.com/manong/1160187.html"
DESCRIPTION = "max-norm rescale via weight.data between forward and backward: stale gradients"
ASK = ["0.weight"]
MUST = [
    [r"\.data\b", r"in-?place", r"modified", r"rescal\w*", r"edit\w*", r"changed"],
    [
        r"between (the )?forward and (the )?backward",
        r"before (the |calling )?backward",
        r"after (the )?forward",
        r"(forward|saved)[^\n]*(differ\w*|no longer|stale|mismatch\w*)",
    ],
]
MUST_NOT = [FALSE_OK, CLAIMS_NONFINITE, r"\bdead\b", r"all[- ]zero"]
MAX_NORM = 0.5


def data():
    g = torch.Generator().manual_seed(1)
    x = torch.randn(128, 10, generator=g)
    return x, (x[:, :3] + x[:, 3:6]).argmax(1)


def max_norm_factor(w):
    return (MAX_NORM / w.norm(dim=1, keepdim=True)).clamp(max=1.0)


def step(watch, before_backward=True):
    torch.manual_seed(0)
    model = nn.Sequential(
        nn.Linear(10, 32), nn.Tanh(), nn.Linear(32, 32), nn.Tanh(), nn.Linear(32, 3)
    )
    start = copy.deepcopy(model)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = data()
    with watch(model) as w:
        optimizer.zero_grad()
        loss = F.cross_entropy(model(x), y)
        if before_backward:
            weight = model[2].weight
            weight.data.mul_(max_norm_factor(weight.data))
        loss.backward()
        grads = {n: p.grad.detach().clone() for n, p in model.named_parameters()}
        optimizer.step()
        if not before_backward:
            with torch.no_grad():
                model[2].weight.mul_(max_norm_factor(model[2].weight))
    # the gradient of the loss the forward computed, on a copy of the starting weights
    names, params = zip(*start.named_parameters(), strict=True)
    true = torch.autograd.grad(F.cross_entropy(start(x), y), params)
    return Run(w=w, model=model, start=start, grads=grads, true=dict(zip(names, true, strict=True)))


def truth(run):
    assert bool((run.start[2].weight.norm(dim=1) > MAX_NORM).any())  # the constraint bites
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
    for n in ("0.weight", "0.bias"):  # computed with the rescaled weight
        assert not torch.allclose(run.grads[n], run.true[n], rtol=1e-3, atol=1e-6), n
    for n in ("2.weight", "2.bias", "4.weight", "4.bias"):
        assert torch.allclose(run.grads[n], run.true[n], atol=1e-6), n
