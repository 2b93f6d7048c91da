"""Gradient accumulation through a BatchNorm layer: a batch of 32 examples is fed as 16
micro-batches of 2, each loss divided by 16 and back-propagated, then one optimizer step, meant as
the step of the batch of 32. BatchNorm normalises each micro-batch with its own statistics: over 2
examples every feature comes out as about +1 or -1 (the sign of the difference of the two; 98% of
them within 0.05 here), so the accumulated gradient is that of a different model from the
batch-of-32 forward and not its gradient (asserted against one forward of the 32 examples), and the
running statistics are updated 16 times from 2-example estimates. Every gradient is finite and
nonzero; nothing raises.

Source: https://forums.fast.ai/t/accumulating-gradients/33219?page=3 ("I suspect something related
to batch normalization. I think it differs for BN if it gets 2 images 16 times than getting 32
images"; "Yes, BatchNorm will be problematic and I'm not sure there is a proper workaround"; "Most
articles did not solve the BN issue when they showed how to do gradient accumulation"). Adapted:
``Linear(10, 32, bias=False)``, ``BatchNorm1d(32)``, ``Tanh``, ``Linear(32, 1)`` on a regression, 16
micro-batches of 2, SGD at 0.1.
"""

import torch
from scenario_kit import CLAIMS_NO_ZERO_GRAD, CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://forums.fast.ai/t/accumulating-gradients/33219?page=3"
DESCRIPTION = "accumulation over 16 micro-batches of 2 through BatchNorm: per-micro-batch stats"
ASK = []
MUST = [
    [r"batch ?norm", r"BatchNorm", r"\bbn\b", r"running[_ ](mean|var|stat)"],
    [
        r"micro-?batch",
        r"(small|tiny) (micro-?)?batch",
        r"batch (size|of) (2|two)",
        r"(2|two) examples",
        r"per[- ](micro-?)?batch statistic",
        r"accumulat\w*[^\n]{0,80}(norm|statistic)",
    ],
]
MUST_NOT = [FALSE_OK, CLAIMS_NONFINITE, CLAIMS_NO_ZERO_GRAD]
MICRO, N_MICRO = 2, 16


def make_model():
    torch.manual_seed(0)
    return nn.Sequential(
        nn.Linear(10, 32, bias=False), nn.BatchNorm1d(32), nn.Tanh(), nn.Linear(32, 1)
    )


def data():
    g = torch.Generator().manual_seed(1)
    x = torch.randn(MICRO * N_MICRO, 10, generator=g)
    return x, (x[:, :3].sum(1, keepdim=True) + 0.1 * torch.randn(len(x), 1, generator=g))


def step(watch):
    model = make_model()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = data()
    normalised = []
    model[1].register_forward_hook(lambda m, i, o: normalised.append(o.detach()))
    with watch(model) as w:
        optimizer.zero_grad()
        for k in range(N_MICRO):
            xb, yb = x[k * MICRO : (k + 1) * MICRO], y[k * MICRO : (k + 1) * MICRO]
            (F.mse_loss(model(xb), yb) / N_MICRO).backward()
        grads = [p.grad.detach().clone() for p in model.parameters()]
        optimizer.step()
    return Run(w=w, model=model, x=x, y=y, grads=grads, normalised=normalised)


def truth(run):
    bn = run.model[1]
    assert isinstance(bn, nn.BatchNorm1d)
    assert int(bn.num_batches_tracked) == N_MICRO  # running statistics updated 16 times
    # over 2 examples (affine still weight 1, bias 0 at these forwards) a normalised feature is
    # +-(a - b) / 2 / sqrt((a - b)^2 / 4 + eps): about +1 or -1 unless the two are within ~1e-2
    z = torch.stack(run.normalised).abs()
    assert len(run.normalised) == N_MICRO and bool((z <= 1).all())
    assert float(((z - 1).abs() < 0.05).float().mean()) > 0.95
    model = make_model()
    full = torch.autograd.grad(F.mse_loss(model(run.x), run.y), list(model.parameters()))
    for g in run.grads:
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0)
    flat = torch.cat([g.flatten() for g in run.grads])
    full_flat = torch.cat([f.flatten() for f in full])
    assert float((flat - full_flat).norm()) > 0.2 * float(full_flat.norm())  # not the big batch's
