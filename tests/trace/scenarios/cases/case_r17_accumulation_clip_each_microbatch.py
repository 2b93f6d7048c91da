"""Gradient accumulation over 4 micro-batches with ``clip_grad_norm_`` called after every
micro-batch's backward instead of once before the optimizer step. Each call rescales the running sum
of the micro-batch gradients accumulated so far (every partial sum here is above the limit), so the
stepped gradient is not the clipped total: earlier micro-batches are shrunk again at every later
clip and the last micro-batch weighs most. The stepped gradient differs from the clipped sum by more
than 20 % of its norm. Every gradient is finite and nonzero; nothing raises.

Source: https://github.com/Deci-AI/super-gradients/pull/653 ("Fix grad clipping stage + upscale
gradients before clipping": "Clipping was done each batch- moved to being done once before gradient
step"). Adapted: a tanh MLP regressor, 4 micro-batches of 16 with the loss divided by 4, clipping at
norm 0.05, SGD; the GradScaler of the pull request is left out (CPU, float32).
"""

import torch
from scenario_kit import CLAIMS_NO_ZERO_GRAD, CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://github.com/Deci-AI/super-gradients/pull/653"
DESCRIPTION = "accumulation over 4 micro-batches, clip_grad_norm_ after each backward"
ASK = []
MUST = [
    [r"clip\w*"],
    [
        r"(each|every|per) micro-?batch",
        r"(before|inside|during|within) (the )?(accumulat\w*|micro-?batch)",
        r"partial (sums?|gradients?)",
        r"\b4 times|more than once|several times|repeatedly|(4|four) (calls|clips)",
    ],
]
MUST_NOT = [FALSE_OK, CLAIMS_NONFINITE, CLAIMS_NO_ZERO_GRAD]
ACCUM, MAX_NORM = 4, 0.05


def data():
    g = torch.Generator().manual_seed(1)
    x = torch.randn(64, 8, generator=g)
    return x, torch.sin(x @ torch.randn(8, 1, generator=g))


def make_model():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(8, 32), nn.Tanh(), nn.Linear(32, 1))


def micro_grads(model, x, y):
    out = []
    for xb, yb in zip(x.chunk(ACCUM), y.chunk(ACCUM), strict=True):
        loss = F.mse_loss(model(xb), yb) / ACCUM
        out.append(torch.autograd.grad(loss, list(model.parameters())))
    return out


def step(watch):
    model = make_model()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = data()
    micro = micro_grads(model, x, y)
    partial_norms = []
    with watch(model) as w:
        optimizer.zero_grad()
        for xb, yb in zip(x.chunk(ACCUM), y.chunk(ACCUM), strict=True):
            (F.mse_loss(model(xb), yb) / ACCUM).backward()
            partial_norms.append(float(nn.utils.clip_grad_norm_(model.parameters(), MAX_NORM)))
        stepped = [p.grad.detach().clone() for p in model.parameters()]
        optimizer.step()
    return Run(w=w, micro=micro, stepped=stepped, partial_norms=partial_norms)


def truth(run):
    total = [sum(gs) for gs in zip(*run.micro, strict=True)]
    norm = float(torch.sqrt(sum((t**2).sum() for t in total)))
    clipped = [t * min(1.0, MAX_NORM / (norm + 1e-6)) for t in total]
    assert len(run.partial_norms) == ACCUM  # clipped after every micro-batch
    assert all(n > MAX_NORM for n in run.partial_norms)
    diff = float(
        torch.sqrt(sum(((s - c) ** 2).sum() for s, c in zip(run.stepped, clipped, strict=True)))
    )
    assert diff > 0.2 * MAX_NORM  # not the clipped total
    for s in run.stepped:
        assert bool(torch.isfinite(s).all()) and bool(s.abs().sum() > 0)
