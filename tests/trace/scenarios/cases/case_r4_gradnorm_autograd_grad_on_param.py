"""Control: a GradNorm step done as the repository does it: the weighted sum of the task losses
is backpropagated with ``retain_graph=True`` (that fills the model's ``.grad``), then each task
loss's gradient with respect to the shared layer's weight is taken with
``torch.autograd.grad(L_k, shared.weight, retain_graph=True)`` -- which returns it and writes
no ``.grad`` -- to set the task weights' own gradient.  The model's ``.grad`` is exactly the
gradient of the weighted loss, from its one backward; both optimizers' parameters move.

Source: https://github.com/hosseinshn/GradNorm/issues/9 ("loss.backward(retain_graph=True)
and gygw = torch.autograd.grad(task_losses[k], W.parameters(), retain_graph=True)"; the issue
asks about memory when "the iteration growth up").
"""

import torch
from case_r4_autograd_grad_on_param_clone import MTL
from scenario_kit import CLAIMS_ERROR, CLAIMS_NO_ZERO_GRAD, CLAIMS_NONFINITE, HEALTHY_OK, Run
from torch.nn import functional as F

SOURCE = "https://github.com/hosseinshn/GradNorm/issues/9"
DESCRIPTION = "control: GradNorm, backward + autograd.grad(L_k, shared.weight): .grad from 1 pass"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_NO_ZERO_GRAD,
    CLAIMS_ERROR,
    r"same graph",
    r"\.grad[^\n]{0,60}(sums?|holds?)[^\n]{0,40}\b(\d+|two|three) (backward )?passes",
]

ALPHA = 1.5


def _batch():
    g = torch.Generator().manual_seed(1)
    x = torch.randn(16, 10, generator=g)
    return x, torch.randn(16, 1, generator=g), torch.randn(16, 1, generator=g)


def step(watch):
    torch.manual_seed(0)
    model = MTL()
    weights = torch.ones(2, requires_grad=True)  # GradNorm's task weights
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    opt_w = torch.optim.Adam([weights], lr=1e-2)
    x, y1, y2 = _batch()
    initial = torch.tensor([1.2, 0.8])  # the task losses at the first iteration
    before = [p.detach().clone() for p in model.parameters()]
    w_before = weights.detach().clone()
    with watch(model) as w:
        opt.zero_grad()
        opt_w.zero_grad()
        o1, o2 = model(x)
        task_losses = torch.stack([F.mse_loss(o1, y1), F.mse_loss(o2, y2)])
        loss = (weights * task_losses).sum()
        loss.backward(retain_graph=True)
        W = model.shared
        norms = []
        for k in range(2):
            gygw = torch.autograd.grad(task_losses[k], W.parameters(), retain_graph=True)
            norms.append(weights[k] * gygw[0].norm())
        norms = torch.stack(norms)
        ratio = task_losses.detach() / initial
        target = (norms.mean() * (ratio / ratio.mean()) ** ALPHA).detach()
        gradnorm_loss = (norms - target).abs().sum()
        weights.grad = torch.autograd.grad(gradnorm_loss, weights)[0]
        grads = [p.grad.clone() for p in model.parameters()]  # as the step reads them
        opt.step()
        opt_w.step()
    return Run(
        w=w,
        error=None,
        model=model,
        grads=grads,
        before=before,
        batch=(x, y1, y2),
        weights=weights,
        w_before=w_before,
    )


def truth(run):
    torch.manual_seed(0)
    ref = MTL()
    x, y1, y2 = run.batch
    o1, o2 = ref(x)
    expected = torch.autograd.grad(F.mse_loss(o1, y1) + F.mse_loss(o2, y2), list(ref.parameters()))
    for gr, e in zip(run.grads, expected, strict=True):  # weights were 1: the weighted loss
        assert torch.allclose(gr, e, atol=1e-6)
    for p, b in zip(run.model.parameters(), run.before, strict=True):
        assert p.grad is not None and bool(torch.isfinite(p.grad).all())
        assert not torch.equal(p.detach(), b)
    assert not torch.equal(run.weights.detach(), run.w_before)
