"""A Sophia-H optimizer (written as a ``torch.optim.Optimizer``) whose clipped step divides the
momentum by ``rho * h + eps`` instead of ``max(rho * h, eps)``.  The Hutchinson estimate of the
Hessian's diagonal, ``u * (H u)`` with a Rademacher ``u``, is negative for 596 of the 1249
coordinates here (noise and negative curvature alike); there the ratio ``|m| / (rho * h + eps)`` is
negative, the clip at 1 does not bound it from below, and the step ``-lr * sign(m) * ratio`` moves
those coordinates along the gradient, uphill, by up to ``lr`` each.  The gradients are finite and
nonzero and nothing raises; only the update's direction is wrong.

Source: https://www.emergentmind.com/topics/sophia-optimizer ("Sophia combines three principal
mechanisms: first-moment (momentum) tracking, exponentially averaged diagonal Hessian estimation,
and clipped preconditioned updates"; "Diagonal Hessian estimation (updated every k steps ...) where
Est is a low-cost estimator such as Hutchinson or Gauss-Newton-Bartlett"; "Clipped,
curvature-normalized step: The element-wise clip restricts each coordinate's update").  Adapted: the
denominator without its floor (the page's formula is not in the stored text); an MLP ``Linear(4,
32), Tanh, Linear(32, 32), Tanh, Linear(32, 1)`` on 128 points of a smooth target, one step at which
the Hessian estimate is refreshed (step 1 of every 10), ``lr = 1e-3``, ``betas = (0.965, 0.99)``,
``rho = 0.04``, ``eps = 1e-12``; the gradient from ``torch.autograd.grad(..., create_graph=True)``,
the Hessian-vector product from a second ``autograd.grad``, the gradient then assigned to ``.grad``.
"""

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://www.emergentmind.com/topics/sophia-optimizer"
DESCRIPTION = "Sophia-H step m / (rho h + eps), no max(., eps): negative h, coordinates go uphill"
ASK = []
MUST = [
    [
        r"negative (hessian|curvature|estimate|diagonal|denominator|h\b)",
        r"(hessian|curvature|estimate|diagonal|denominator)[^\n]{0,40}negative",
        r"max\s?\(\s?(rho|ρ)|clamp\w*|floor",
    ],
    [
        r"uphill|ascen\w*|increas\w* the loss|wrong direction|along the gradient|sign",
        r"sophia|hutchinson|precondition\w*",
    ],
]
MUST_NOT = [FALSE_OK, CLAIMS_NONFINITE, r"\bdead\b", r"requires_grad\s*(=|is|was)?\s*False"]


class SophiaH(torch.optim.Optimizer):
    def __init__(self, params, lr=1e-3, betas=(0.965, 0.99), rho=0.04, eps=1e-12, floor=False):
        defaults = {"lr": lr, "betas": betas, "rho": rho, "eps": eps, "floor": floor}
        super().__init__(params, defaults)

    @torch.no_grad()
    def update_hessian(self, hess_estimates):
        for group in self.param_groups:
            for p, h_hat in zip(group["params"], hess_estimates, strict=True):
                state = self.state[p]
                state.setdefault("hess", torch.zeros_like(p))
                state["hess"].mul_(group["betas"][1]).add_(h_hat, alpha=1 - group["betas"][1])

    @torch.no_grad()
    def step(self, closure=None):
        for group in self.param_groups:
            for p in group["params"]:
                state = self.state[p]
                m = state.setdefault("exp_avg", torch.zeros_like(p))
                m.mul_(group["betas"][0]).add_(p.grad, alpha=1 - group["betas"][0])
                h = group["rho"] * state["hess"]
                den = h.clamp(min=group["eps"]) if group["floor"] else h + group["eps"]
                ratio = (m.abs() / den).clamp(max=1)
                p.addcmul_(m.sign(), ratio, value=-group["lr"])


def data():
    g = torch.Generator().manual_seed(1)
    x = torch.randn(128, 4, generator=g)
    return x, torch.sin(x[:, :1] * 2) + x[:, 1:2] * x[:, 2:3]


def step(watch, floor=False):
    torch.manual_seed(0)
    model = nn.Sequential(
        nn.Linear(4, 32), nn.Tanh(), nn.Linear(32, 32), nn.Tanh(), nn.Linear(32, 1)
    )
    params = list(model.parameters())
    optimizer = SophiaH(params, floor=floor)
    before = [p.detach().clone() for p in params]
    x, y = data()
    g = torch.Generator().manual_seed(2)
    with watch(model) as w:
        optimizer.zero_grad()
        loss = F.mse_loss(model(x), y)
        grads = torch.autograd.grad(loss, params, create_graph=True)
        u = [torch.randint(0, 2, p.shape, generator=g).float() * 2 - 1 for p in params]
        hvp = torch.autograd.grad(grads, params, u)
        optimizer.update_hessian([ui * hi for ui, hi in zip(u, hvp, strict=True)])
        grads = [gi.detach() for gi in grads]
        for p, gi in zip(params, grads, strict=True):
            p.grad = gi.clone()
        optimizer.step()
    hess = [optimizer.state[p]["hess"].clone() for p in params]
    moves = [p.detach() - b for p, b in zip(params, before, strict=True)]
    return Run(w=w, model=model, grads=grads, hess=hess, moves=moves)


def truth(run):
    uphill = negative = 0
    for g, h, d in zip(run.grads, run.hess, run.moves, strict=True):
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0)
        negative += int((h < 0).sum())
        uphill += int(((d * g) > 0).sum())  # moved along the gradient
        assert bool(((d * g) > 0)[h > 0].sum() == 0)  # positive curvature: downhill
    assert negative > 100 and uphill == negative
