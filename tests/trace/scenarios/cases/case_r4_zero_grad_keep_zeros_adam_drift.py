"""Two heads on one body, Adam, and ``optimizer.zero_grad(set_to_none=False)``.  The first
batch trains both heads; the second carries labels for head_a only, so head_b's output is not
used by its loss.  Because ``.grad`` was zeroed rather than set to None, head_b holds an
all-zero ``.grad`` at the second step, and Adam steps on it with the running averages of the
first step: head_b moves although the second batch sent it nothing.

Source: https://pytorch.org/docs/master/generated/torch.optim.Optimizer.zero_grad.html
("torch.optim optimizers have a different behavior if the gradient is 0 or None (in one case it
does the step with a gradient of 0 and in the other it skips the step altogether)").
"""

import torch
from scenario_kit import FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://pytorch.org/docs/master/generated/torch.optim.Optimizer.zero_grad.html"
DESCRIPTION = "zero_grad(set_to_none=False), head_b unused in step 2: Adam still moves it"
ASK = ["head_b.weight"]
MUST = [
    [
        r"(still |was |were |is |are )(moved|updated|changed|stepped)",
        r"momentum",
        r"\bAdam\b",
        r"running average",
        r"moving average",
        r"exp_avg",
        r"set_to_none",
    ],
    [
        r"not used",
        r"unused",
        r"zero",
        r"no gradient",
        r"(did not|does not|doesn't) (reach|depend|contribute)",
    ],
]
MUST_NOT = [FALSE_OK, r"head_b[^\n]{0,60}never called"]


class TwoHeads(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(8, 16), nn.Tanh())
        self.head_a = nn.Linear(16, 3)
        self.head_b = nn.Linear(16, 2)

    def forward(self, x):
        h = self.body(x)
        return self.head_a(h), self.head_b(h)


def _batches():
    g = torch.Generator().manual_seed(1)
    x1, x2 = torch.randn(16, 8, generator=g), torch.randn(16, 8, generator=g)
    ya1, yb1 = torch.randint(0, 3, (16,), generator=g), torch.randint(0, 2, (16,), generator=g)
    ya2 = torch.randint(0, 3, (16,), generator=g)
    return (x1, ya1, yb1), (x2, ya2)


def step(watch, set_to_none=False):
    torch.manual_seed(0)
    model = TwoHeads()
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    (x1, ya1, yb1), (x2, ya2) = _batches()
    with watch(model) as w:
        opt.zero_grad(set_to_none=set_to_none)  # batch 1: both tasks labelled
        out_a, out_b = model(x1)
        (F.cross_entropy(out_a, ya1) + F.cross_entropy(out_b, yb1)).backward()
        opt.step()
        before_b = model.head_b.weight.detach().clone()
        opt.zero_grad(set_to_none=set_to_none)  # batch 2: task A only
        out_a, _ = model(x2)
        F.cross_entropy(out_a, ya2).backward()
        grad_b = None if model.head_b.weight.grad is None else model.head_b.weight.grad.clone()
        grad_a = model.head_a.weight.grad.clone()
        opt.step()
    return Run(w=w, model=model, before_b=before_b, grad_b=grad_b, grad_a=grad_a)


def truth(run):
    assert bool(run.grad_a.abs().sum() > 0)
    assert run.grad_b is not None and bool((run.grad_b == 0).all())  # zeros, not None
    assert not torch.equal(run.model.head_b.weight.detach(), run.before_b)  # Adam moved it
