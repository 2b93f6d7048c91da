"""A domain-adversarial (DANN) step whose gradient reversal layer is written as an old-style
``torch.autograd.Function`` (``forward(self, input)`` as an instance method, an instance called
like a function).  Current torch refuses it at the first call: the forward raises before any
backward, and nothing gets a gradient.

Source: https://www.mo4tech.com/pytorch-implements-the-grl-gradient-reversal-layer.html (the GRL
"class GRL(Function): def forward(self,input): return input; def backward(self,grad_output):
grad_input = grad_output.neg()", used as ``Grl = GRL(); s = Grl(s)``).
"""

import warnings

import torch
from scenario_kit import FALSE_OK, Run
from torch import nn
from torch.autograd import Function
from torch.nn import functional as F

SOURCE = "https://www.mo4tech.com/pytorch-implements-the-grl-gradient-reversal-layer.html"
DESCRIPTION = "DANN with an old-style (non-static) autograd.Function GRL: the forward raises"
ASK = ["features.0.weight"]
MUST = [
    [r"\braised\b", r"RuntimeError", r"exception", r"\berror\b"],
    [r"legacy", r"non-?static", r"static", r"GRL", r"Function"],
]
MUST_NOT = [FALSE_OK]


class GRL(Function):  # the page's layer, old style
    def forward(self, input):
        return input

    def backward(self, grad_output):
        return grad_output.neg()


class RevGrad(Function):  # new style: static methods, used with .apply
    @staticmethod
    def forward(ctx, x, alpha):
        ctx.alpha = alpha
        return x.view_as(x)

    @staticmethod
    def backward(ctx, grad_output):
        return -ctx.alpha * grad_output, None


class DANN(nn.Module):
    def __init__(self, legacy=True, alpha=1.0):
        super().__init__()
        self.features = nn.Sequential(nn.Linear(10, 16), nn.ReLU())
        self.label = nn.Linear(16, 3)
        self.domain = nn.Sequential(nn.Linear(16, 8), nn.ReLU(), nn.Linear(8, 1))
        self.legacy, self.alpha = legacy, alpha

    def forward(self, x):
        f = self.features(x)
        reversed_f = GRL()(f) if self.legacy else RevGrad.apply(f, self.alpha)
        return self.label(f), self.domain(reversed_f)


def batches():
    g = torch.Generator().manual_seed(1)
    xs, ys = torch.randn(16, 10, generator=g), torch.randint(0, 3, (16,), generator=g)
    xt = torch.randn(16, 10, generator=g) + 1.0
    return xs, ys, xt


def dann_loss(model, xs, ys, xt):
    cls, dom_s = model(xs)
    _, dom_t = model(xt)
    dom = torch.cat([dom_s, dom_t]).squeeze(1)
    dom_y = torch.cat([torch.zeros(16), torch.ones(16)])
    return F.cross_entropy(cls, ys) + F.binary_cross_entropy_with_logits(dom, dom_y)


def step(watch, legacy=True):
    torch.manual_seed(0)
    model = DANN(legacy)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    xs, ys, xt = batches()
    error = None
    try:
        # a script sees the DeprecationWarning of ``GRL()`` printed, then the RuntimeError
        with watch(model) as w, warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            opt.zero_grad()
            dann_loss(model, xs, ys, xt).backward()
            opt.step()
    except RuntimeError as e:
        error = e
    return Run(w=w, model=model, error=error)


def truth(run):
    assert run.error is not None and "Legacy autograd function" in str(run.error)
    assert all(p.grad is None for p in run.model.parameters())
