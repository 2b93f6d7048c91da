"""Control: the same regressor trained with sharpness-aware minimisation done in two
forward-backward passes, as the SAM references describe: backward at the weights, ``first_step``
adds ``e = rho * g / ||g||`` (under ``no_grad``), the gradients are zeroed and the loss is computed
and backpropagated again at the perturbed weights, ``second_step`` subtracts ``e`` and lets the base
SGD step with the perturbed point's gradient.  The update is exactly ``-lr`` times the gradient at
``w + e``; the loss goes down; every gradient of both passes is finite and nonzero.

Source: https://junaidaliop.github.io/zij/math/sam/ ("the gradient at the perturbed point is fed to
the wrapped base optimizer"; "Each step needs two forward-backward passes: either call first_step,
recompute the loss and gradients, then call second_step, or pass step a closure that zeroes
gradients, computes the loss, and calls backward()").
"""

import torch
from case_r15_sam_single_pass_no_restore import LR, RHO, data, flat, make_model
from scenario_kit import CLAIMS_ERROR, CLAIMS_NO_ZERO_GRAD, CLAIMS_NONFINITE, HEALTHY_OK, Run
from torch.nn import functional as F

SOURCE = "https://junaidaliop.github.io/zij/math/sam/"
DESCRIPTION = "control: SAM with two forward-backward passes, perturbation removed before the step"
ASK = []
MUST = [
    [
        HEALTHY_OK,
        r"^summary:[^\n]*(\bSAM\b|sharpness|perturb\w*)",
    ]
]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    CLAIMS_NO_ZERO_GRAD,
    r"accumulat\w*",
    r"uphill",
    r"no gradient",
    r"all-zero",
]


class SAM(torch.optim.Optimizer):
    def __init__(self, params, base_optimizer, rho=RHO, **kwargs):
        super().__init__(params, dict(rho=rho, **kwargs))
        self.base_optimizer = base_optimizer(self.param_groups, **kwargs)

    @torch.no_grad()
    def first_step(self):
        grads = [p.grad for g in self.param_groups for p in g["params"] if p.grad is not None]
        grad_norm = torch.norm(torch.stack([gr.norm() for gr in grads]))
        for group in self.param_groups:
            scale = group["rho"] / (grad_norm + 1e-12)
            for p in group["params"]:
                e_w = p.grad * scale
                p.add_(e_w)
                self.state[p]["e_w"] = e_w

    @torch.no_grad()
    def second_step(self):
        for group in self.param_groups:
            for p in group["params"]:
                p.sub_(self.state[p]["e_w"])
        self.base_optimizer.step()

    def step(self, closure):
        closure = torch.enable_grad()(closure)
        self.first_step()
        self.zero_grad()
        closure()
        self.second_step()


def step(watch):
    model = make_model()
    opt = SAM(model.parameters(), torch.optim.SGD, rho=RHO, lr=LR)
    x, y = data()
    before = [p.detach().clone() for p in model.parameters()]
    passes = []

    def closure():
        loss = F.mse_loss(model(x), y)
        loss.backward()
        passes.append([p.grad.detach().clone() for p in model.parameters()])
        return loss

    with watch(model) as w:
        opt.zero_grad()
        loss = closure()
        opt.step(closure)
    after = [p.detach().clone() for p in model.parameters()]
    with torch.no_grad():
        loss_after = float(F.mse_loss(model(x), y))
    return Run(
        w=w,
        loss=float(loss.detach()),
        loss_after=loss_after,
        before=before,
        after=after,
        passes=passes,
        x=x,
        y=y,
    )


def truth(run):
    assert len(run.passes) == 2
    for grads in run.passes:
        for gr in grads:
            assert bool(torch.isfinite(gr).all()) and bool(gr.abs().sum() > 0)
    g = flat(run.passes[0])
    e = RHO * g / g.norm()
    # the gradient at w + e, by plain torch on a copy of the model
    probe = make_model()
    with torch.no_grad():
        for p, b, e_p in zip(
            probe.parameters(),
            run.before,
            torch.split(e, [b.numel() for b in run.before]),
            strict=True,
        ):
            p.copy_(b + e_p.view_as(b))
    g_pert = torch.autograd.grad(F.mse_loss(probe(run.x), run.y), list(probe.parameters()))
    delta = flat(run.after) - flat(run.before)
    assert torch.allclose(delta, -LR * flat(g_pert), atol=1e-6)
    assert torch.allclose(flat(run.passes[1]), flat(g_pert), atol=1e-6)
    assert run.loss_after < run.loss
