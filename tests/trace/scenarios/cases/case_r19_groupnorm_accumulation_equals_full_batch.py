"""Control: the same gradient accumulation (16 micro-batches of 2, each loss divided by 16, one
step) with ``GroupNorm`` in place of BatchNorm, one of the page's alternatives. GroupNorm normalises
each example over its own features, so a micro-batch's forward does not depend on the other
examples: the accumulated gradient equals the gradient of one forward of the 32 examples (asserted),
and every parameter gets a finite, nonzero gradient.

Source:
https://errorhandle.ai/how-to-update-model-parameters-along-with-batch-norm-with-accumulated-gradients
("loss = criterion(outputs, targets) / accumulation_steps"; "If batch normalization behaves
unexpectedly due to small batch sizes, consider SyncBatchNorm or GroupNorm as alternatives").
Adapted: ``Linear(10, 32, bias=False)``, ``GroupNorm(4, 32)``, ``Tanh``, ``Linear(32, 1)`` on a
regression, 16 micro-batches of 2, SGD at 0.1.
"""

import torch
from scenario_kit import CLAIMS_ERROR, CLAIMS_NO_ZERO_GRAD, CLAIMS_NONFINITE, HEALTHY_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = (
    "https://errorhandle.ai/"
    "how-to-update-model-parameters-along-with-batch-norm-with-accumulated-gradients"
)
DESCRIPTION = "control: accumulation over 16 micro-batches of 2 with GroupNorm: full-batch grads"
ASK = []
MUST = [[HEALTHY_OK, r"accumulat\w*[^\n]{0,60}\b(16|sixteen)\b"]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    CLAIMS_NO_ZERO_GRAD,
    r"batch ?norm|BatchNorm|running[_ ](mean|var|stat)",
]
MICRO, N_MICRO = 2, 16


def make_model():
    torch.manual_seed(0)
    return nn.Sequential(
        nn.Linear(10, 32, bias=False), nn.GroupNorm(4, 32), nn.Tanh(), nn.Linear(32, 1)
    )


def data():
    g = torch.Generator().manual_seed(1)
    x = torch.randn(MICRO * N_MICRO, 10, generator=g)
    return x, (x[:, :3].sum(1, keepdim=True) + 0.1 * torch.randn(len(x), 1, generator=g))


def step(watch):
    model = make_model()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = data()
    with watch(model) as w:
        optimizer.zero_grad()
        for k in range(N_MICRO):
            xb, yb = x[k * MICRO : (k + 1) * MICRO], y[k * MICRO : (k + 1) * MICRO]
            (F.mse_loss(model(xb), yb) / N_MICRO).backward()
        grads = [p.grad.detach().clone() for p in model.parameters()]
        optimizer.step()
    return Run(w=w, model=model, x=x, y=y, grads=grads)


def truth(run):
    assert isinstance(run.model[1], nn.GroupNorm)
    model = make_model()
    full = torch.autograd.grad(F.mse_loss(model(run.x), run.y), list(model.parameters()))
    for g, f in zip(run.grads, full, strict=True):
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0)
        assert torch.allclose(g, f, atol=1e-6, rtol=1e-4)  # the batch of 32's gradient
