"""A Grad-CAM-style full backward hook on a convolution whose output then goes through
``nn.ReLU(inplace=True)``: with the hook, the module's output is a view made by the hook's
Function, and the in-place ReLU on it is forbidden.  The forward raises; no step happens.

Source: https://github.com/pytorch/pytorch/issues/61519 ("Inplace ReLU incompatible with backward
hook"; "I use backward hooks to get intermediate feature maps and gradients ... now it has
turned into an error. I tried on my end and was able to reproduce the bug with a simple
sequential that includes an in place ReLU", with ``nn.Sequential(nn.Conv2d(3, 8, 3, padding=1),
nn.ReLU(), nn.Conv2d(8, 8, 3, padding=1), nn.ReLU(inplace=True))``).
"""

import torch
from scenario_kit import FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://github.com/pytorch/pytorch/issues/61519"
DESCRIPTION = "full backward hook on a conv followed by ReLU(inplace=True): the forward raises"
ASK = ["2.weight"]
MUST = [
    [r"\braised\b", r"RuntimeError", r"exception", r"\berror\b"],
    [r"in-?place", r"\bhook", r"\bview\b"],
]
MUST_NOT = [FALSE_OK]


def step(watch, inplace=True):
    torch.manual_seed(0)
    mod = nn.Sequential(
        nn.Conv2d(3, 8, 3, padding=1),
        nn.ReLU(),
        nn.Conv2d(8, 8, 3, padding=1),
        nn.ReLU(inplace=inplace),
        nn.AdaptiveAvgPool2d(1),
        nn.Flatten(),
        nn.Linear(8, 2),
    )
    seen = []
    mod[2].register_full_backward_hook(lambda m, grad_in, grad_out: seen.append(grad_out[0]))
    opt = torch.optim.SGD(mod.parameters(), lr=0.1)
    g = torch.Generator().manual_seed(1)
    x, y = torch.rand(4, 3, 8, 8, generator=g), torch.randint(0, 2, (4,), generator=g)
    error = None
    try:
        with watch(mod) as w:
            opt.zero_grad()
            F.cross_entropy(mod(x), y).backward()
            opt.step()
    except RuntimeError as e:
        error = e
    return Run(w=w, model=mod, error=error, seen=seen)


def truth(run):
    assert run.error is not None and "is a view and is being modified inplace" in str(run.error)
    assert not run.seen
    assert all(p.grad is None for p in run.model.parameters())
