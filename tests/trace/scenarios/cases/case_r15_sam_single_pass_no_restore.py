"""Sharpness-aware minimisation written as a one-call ``step()``: it perturbs every weight by ``rho
* g / ||g||`` (the ascent step), then calls the base optimizer right away. There is no second
forward-backward pass at the perturbed weights, so the base step uses the gradient of the
unperturbed point, and the perturbation is never taken back: the update is ``rho * g / ||g|| - lr *
g``, the gradient's own direction whenever ``lr * ||g|| < rho``. Here (``rho = 0.05``, SGD with ``lr
= 0.01``, gradient norm below 5) every step moves the weights uphill: the loss after the step is
higher than before. Every gradient is finite and nonzero; nothing raises.

Source: https://docs.ahmadiehsan.ir/ai/neural_network/regularization/sharpness_aware_minimization
(its ``class SAM(torch.optim.Optimizer)``: ``def step(self): # First forward-backward pass ...
p.add_(e_w) ... # Second forward-backward pass  self.base_optimizer.step()`` with nothing between
the two comments).  Adapted: the page's ``__init__`` does not call ``Optimizer.__init__`` (no
``param_groups``) and its ``step`` edits leaves outside ``no_grad`` (torch raises); both written as
any working optimizer does, the missing second pass and restore kept.  A tanh MLP regressor.
"""

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://docs.ahmadiehsan.ir/ai/neural_network/regularization/sharpness_aware_minimization"
DESCRIPTION = "SAM step without the second forward-backward or restore: weights move uphill"
ASK = []
MUST = [
    [
        r"\bSAM\b",
        r"sharpness",
        r"perturb\w*",
        r"ascent",
        r"second (forward|backward|pass)",
        r"(two|2) (forward|backward|passes)",
        r"(restor|undo|subtract)\w*",
        r"uphill",
        r"(loss|it) (went|goes|rose|increased)[^\n]{0,20}up|loss increased|increase[sd]? the loss",
        r"outside (the )?optimizer|not by the optimizer|in-?place (edit|change|update)",
    ],
]
MUST_NOT = [
    FALSE_OK,
    CLAIMS_NONFINITE,
    r"dead (units?|relu|neurons?)",
    r"no_grad",
    r"not in (the |any )?optimizer",
]
RHO, LR = 0.05, 0.01


class SAM(torch.optim.Optimizer):
    """The page's one-pass SAM (see the module docstring)."""

    def __init__(self, params, base_optimizer, rho=RHO, **kwargs):
        super().__init__(params, dict(rho=rho, **kwargs))
        self.rho = rho
        self.base_optimizer = base_optimizer(self.param_groups, **kwargs)

    def _grad_norm(self):
        grads = [p.grad for g in self.param_groups for p in g["params"] if p.grad is not None]
        return torch.norm(torch.stack([gr.norm() for gr in grads]))

    @torch.no_grad()
    def step(self):
        # First forward-backward pass
        grad_norm = self._grad_norm()
        scale = self.rho / (grad_norm + 1e-12)
        # Perturb weights
        for group in self.param_groups:
            for p in group["params"]:
                e_w = p.grad * scale
                p.add_(e_w)
        # Second forward-backward pass
        self.base_optimizer.step()


def data():
    g = torch.Generator().manual_seed(1)
    x = torch.randn(64, 6, generator=g)
    y = torch.sin(x[:, :1]) + 0.5 * x[:, 1:2]
    return x, y


def make_model():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(6, 16), nn.Tanh(), nn.Linear(16, 1))


def step(watch):
    model = make_model()
    opt = SAM(model.parameters(), torch.optim.SGD, rho=RHO, lr=LR)
    x, y = data()
    before = [p.detach().clone() for p in model.parameters()]
    with watch(model) as w:
        opt.zero_grad()
        loss = F.mse_loss(model(x), y)
        loss.backward()
        grads = [p.grad.detach().clone() for p in model.parameters()]
        opt.step()
    after = [p.detach().clone() for p in model.parameters()]
    with torch.no_grad():
        loss_after = float(F.mse_loss(model(x), y))
    return Run(
        w=w,
        loss=float(loss.detach()),
        loss_after=loss_after,
        before=before,
        after=after,
        grads=grads,
    )


def flat(tensors):
    return torch.cat([t.flatten() for t in tensors])


def truth(run):
    g = flat(run.grads)
    assert bool(torch.isfinite(g).all())
    assert all(bool(gr.abs().sum() > 0) for gr in run.grads)
    gnorm = float(g.norm())
    assert LR * gnorm < RHO  # the ascent outweighs the descent
    delta = flat(run.after) - flat(run.before)
    assert torch.allclose(delta, RHO * g / gnorm - LR * g, atol=1e-6)  # no second pass, no restore
    assert float(torch.cosine_similarity(delta, g, dim=0)) > 0.99  # along +g: uphill
    assert run.loss_after > run.loss
