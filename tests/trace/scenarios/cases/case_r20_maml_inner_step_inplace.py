"""First-order MAML written with an ordinary in-place inner update: ``support_loss.backward()``,
then ``p -= inner_lr * p.grad`` under ``torch.no_grad()`` on the model's own parameters, then
``query_loss.backward()`` and the meta-optimizer's ``step()``.  Two things go wrong at once: the
initial weights ``theta`` are overwritten by the task's adapted weights ``theta'``, so the meta step
starts from ``theta'`` (the meta-learned initialisation drifts with every task's adaptation); and
the query backward accumulates into ``.grad`` that still holds the support gradient, so the meta
step uses ``g_support + g_query(theta')`` instead of FOMAML's ``g_query(theta')``.  The
parameters end at ``theta - (inner_lr + meta_lr) g_support - meta_lr g_query`` instead of ``theta -
meta_lr g_query``.  Every gradient is finite and nonzero; nothing raises.

Source: http://www.wonderwice.com/iteryne/concepts/ ("The inner loop must differentiate through a
parameter update, which an ordinary in-place param -= lr * grad would break. iteryne instead
carries parameters as a dict[str, Tensor] and runs the model statelessly with
torch.func.functional_call"; "First-order MAML / FOMAML (first_order=True, create_graph=False): g
is detached, so p' = p - α g keeps only the identity edge p' → p. The same query_loss.backward()
then yields ∂L / ∂θ' — exactly the FOMAML meta-gradient").  Adapted: the page names the in-place
update as what breaks; here it is written out.  Sine regression (one task: amplitude and phase
drawn from a seeded generator, 10 support and 10 query points in [-5, 5]), the MAML paper's
1-40-40-1 MLP with ``Tanh`` in place of ReLU, inner and meta learning rates 0.01 (SGD).
"""

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn
from torch.func import functional_call
from torch.nn import functional as F

SOURCE = "http://www.wonderwice.com/iteryne/concepts/"
DESCRIPTION = "MAML inner step in place on the model's params: meta step from theta', grads summed"
ASK = []
MUST = [
    [
        r"in-?place",
        (
            r"(modified|changed|updated|edited|overwrit\w*|moved)[^\n]{0,80}(between|before the "
            r"(second|query|last|optimi\w*|meta))"
        ),
        r"inner (loop|step|update)",
        r"(not zeroed|without zero_grad|zero_grad[^\n]{0,40}(missing|between))",
        r"accumulat\w*",
        r"(two|2|both) backward",
    ]
]
MUST_NOT = [FALSE_OK, CLAIMS_NONFINITE]
INNER_LR = 0.01
META_LR = 0.01


def make_model():
    torch.manual_seed(0)
    return nn.Sequential(
        nn.Linear(1, 40), nn.Tanh(), nn.Linear(40, 40), nn.Tanh(), nn.Linear(40, 1)
    )


def task():
    g = torch.Generator().manual_seed(1)
    amplitude = 0.1 + 4.9 * torch.rand(1, generator=g)
    phase = torch.pi * torch.rand(1, generator=g)
    xs = 10 * torch.rand(10, 1, generator=g) - 5
    xq = 10 * torch.rand(10, 1, generator=g) - 5
    return xs, amplitude * torch.sin(xs + phase), xq, amplitude * torch.sin(xq + phase)


def step(watch):
    model = make_model()
    start = {n: p.detach().clone() for n, p in model.named_parameters()}
    meta_opt = torch.optim.SGD(model.parameters(), lr=META_LR)
    xs, ys, xq, yq = task()
    with watch(model) as w:
        meta_opt.zero_grad()
        support_loss = F.mse_loss(model(xs), ys)
        support_loss.backward()
        with torch.no_grad():
            for p in model.parameters():
                p -= INNER_LR * p.grad  # the inner step, on theta itself
        query_loss = F.mse_loss(model(xq), yq)
        query_loss.backward()
        grads = {n: p.grad.detach().clone() for n, p in model.named_parameters()}
        meta_opt.step()
    return Run(w=w, model=model, start=start, grads=grads, task=(xs, ys, xq, yq))


def fomaml_reference(run):
    """Support gradient at theta, adapted weights, query gradient at theta' (all with torch)."""
    model = make_model()
    xs, ys, xq, yq = run.task
    theta = {n: run.start[n].clone().requires_grad_(True) for n in run.start}
    g_s = torch.autograd.grad(F.mse_loss(functional_call(model, theta, (xs,)), ys),
                              list(theta.values()))  # fmt: skip
    adapted = {n: (theta[n] - INNER_LR * g).detach().requires_grad_(True)
               for n, g in zip(theta, g_s, strict=True)}  # fmt: skip
    g_q = torch.autograd.grad(F.mse_loss(functional_call(model, adapted, (xq,)), yq),
                              list(adapted.values()))  # fmt: skip
    return dict(zip(theta, g_s, strict=True)), dict(zip(theta, g_q, strict=True))


def truth(run):
    g_s, g_q = fomaml_reference(run)
    params = dict(run.model.named_parameters())
    for n, theta in run.start.items():
        g = run.grads[n]
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
        assert torch.allclose(g, g_s[n] + g_q[n], atol=1e-6), n  # support + query, accumulated
        now = params[n].detach()
        expected = theta - INNER_LR * g_s[n] - META_LR * (g_s[n] + g_q[n])
        assert torch.allclose(now, expected, atol=1e-6), n  # the meta step started from theta'
        assert not torch.allclose(now, theta - META_LR * g_q[n], atol=1e-6), n  # not FOMAML's
