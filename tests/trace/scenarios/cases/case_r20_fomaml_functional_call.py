"""Control: the same sine task and MLP with first-order MAML written as the page describes: the
parameters are read into a dict, the support gradient is taken with ``torch.autograd.grad(...,
create_graph=False)`` (it fills no ``.grad``), the fast weights ``p - inner_lr * g`` are a new
dict, the query loss runs statelessly through ``torch.func.functional_call``, and its backward
fills ``.grad`` with ``dL_query / dtheta'`` (the fast weights keep the identity edge to
``theta``).  The meta step is ``theta - meta_lr g_query(theta')``; the model's parameters are
never edited in place.  Every gradient is finite and nonzero.

Source: http://www.wonderwice.com/iteryne/concepts/ ("The inner step is computed with
torch.autograd.grad(support_loss, params, create_graph=not first_order) and then p' = p - α g";
"First-order MAML / FOMAML (first_order=True, create_graph=False): g is detached, so p' = p - α g
keeps only the identity edge p' → p. The same query_loss.backward() then yields ∂L / ∂θ' —
exactly the FOMAML meta-gradient").  Adapted as the bug.
"""

import torch
from case_r20_maml_inner_step_inplace import INNER_LR, META_LR, fomaml_reference, make_model, task
from scenario_kit import CLAIMS_ERROR, CLAIMS_NO_ZERO_GRAD, CLAIMS_NONFINITE, HEALTHY_OK, Run
from torch.func import functional_call
from torch.nn import functional as F

SOURCE = "http://www.wonderwice.com/iteryne/concepts/"
DESCRIPTION = "control: FOMAML with autograd.grad and functional_call fast weights: healthy"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [CLAIMS_NONFINITE, CLAIMS_ERROR, CLAIMS_NO_ZERO_GRAD, r"accumulat\w*", r"in-?place"]


def step(watch):
    model = make_model()
    start = {n: p.detach().clone() for n, p in model.named_parameters()}
    meta_opt = torch.optim.SGD(model.parameters(), lr=META_LR)
    xs, ys, xq, yq = task()
    with watch(model) as w:
        meta_opt.zero_grad()
        params = dict(model.named_parameters())
        support_loss = F.mse_loss(functional_call(model, params, (xs,)), ys)
        g = torch.autograd.grad(support_loss, list(params.values()), create_graph=False)
        fast = {n: p - INNER_LR * gi for (n, p), gi in zip(params.items(), g, strict=True)}
        query_loss = F.mse_loss(functional_call(model, fast, (xq,)), yq)
        query_loss.backward()
        grads = {n: p.grad.detach().clone() for n, p in model.named_parameters()}
        meta_opt.step()
    return Run(w=w, model=model, start=start, grads=grads, task=(xs, ys, xq, yq))


def truth(run):
    _, g_q = fomaml_reference(run)
    params = dict(run.model.named_parameters())
    for n, theta in run.start.items():
        g = run.grads[n]
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
        assert torch.allclose(g, g_q[n], atol=1e-6), n  # the FOMAML meta-gradient
        assert torch.allclose(params[n].detach(), theta - META_LR * g_q[n], atol=1e-6), n
