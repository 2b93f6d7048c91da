"""Linear regression on unnormalised features (one column is a Unix timestamp in nanoseconds,
about 1.7e18): the loss and every gradient are finite, but the gradients are so large that the
total norm clip_grad_norm_ computes in float32 overflows to inf; the clip coefficient is
max_norm / inf = 0 and every gradient is multiplied by it.  The optimizer reads all-zero
gradients and nothing moves; no error (error_if_nonfinite defaults to False).

Source: https://github.com/pytorch/pytorch/issues/46849 ("clip_grad_norm_ silently passes when
not finite": with p * 1e20, "grad_norm tensor(inf) max(abs(grad)) tensor(0.)").
"""

import torch
from scenario_kit import FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://github.com/pytorch/pytorch/issues/46849"
DESCRIPTION = "ns timestamps as a feature: clip_grad_norm_ total norm overflows, grads zeroed"
ASK = []
MUST = [
    [r"\bzero", r"all-zero"],
    [
        r"\bclip",
        r"between the backward and the (optimizer )?step",
        r"before the (optimizer )?step",
        r"after the backward",
        r"overflow",
    ],
]
MUST_NOT = [FALSE_OK, r"dead (relu|unit)", r"no gradient"]


def step(watch):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 1))
    x = torch.randn(32, 3)
    x[:, 2] = 1.7e18 + 1e15 * torch.rand(32)  # a timestamp in ns, never normalised
    y = torch.randn(32, 1)
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    before = [p.detach().clone() for p in model.parameters()]
    with watch(model) as w:
        opt.zero_grad()
        loss = F.mse_loss(model(x), y)
        loss.backward()
        raw = [p.grad.clone() for p in model.parameters()]
        total = nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
        opt.step()
    return Run(w=w, model=model, before=before, raw=raw, total=total, loss=loss.detach())


def truth(run):
    assert bool(torch.isfinite(run.loss))
    for g in run.raw:
        assert bool(torch.isfinite(g).all()) and bool((g != 0).any())
    assert bool(torch.isinf(run.total))
    for p, b in zip(run.model.parameters(), run.before, strict=True):
        assert bool((p.grad == 0).all())
        assert torch.equal(p.detach(), b)
