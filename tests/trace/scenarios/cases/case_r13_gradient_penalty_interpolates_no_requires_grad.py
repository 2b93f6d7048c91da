"""A GAN discriminator step with a gradient penalty on points interpolated between real and
(detached) fake samples, ``x_hat = eps * real + (1 - eps) * fake.detach()``, where the line
``x_hat.requires_grad = True`` of the question's code is left out.  ``x_hat`` is built from data
and a detached tensor, so it does not require grad and ``D(x_hat)`` is not a function of it in the
graph: ``torch.autograd.grad(outputs=logits, inputs=x_hat, ...)`` raises ``RuntimeError: One of
the differentiated Tensors does not require grad`` before the discriminator's loss is
backpropagated.  No parameter gets a gradient and the step is never taken.

Source: https://programbox.ru/2022/01/09/%d0%b2%d1%8b%d0%b2%d0%be%d0%b4-%d1%83%d1%80%d0%b0%d0%b2%d0%bd%d0%b5%d0%bd%d0%b8%d0%b9-%d0%b4%d0%bb%d1%8f-%d0%be%d0%b1%d1%80%d0%b0%d1%82%d0%bd%d0%be%d0%b3%d0%be-%d1%80%d0%b0%d1%81%d0%bf%d1%80%d0%be
(a question on the gradient penalty's backward, whose PyTorch code reads ``x_hat = epsilon *
real_data + (1-epsilon) * fake_data.detach()``; ``x_hat.requires_grad = True``; ``grad =
torch.autograd.grad(outputs=logits, inputs=x_hat, grad_outputs=..., create_graph=True)[0]``).
Adapted: the ``requires_grad`` line removed, small MLP generator and discriminator, a
non-saturating BCE loss plus ``10 * (||grad|| - 1)**2``.
"""

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run, expect_raise
from torch import nn
from torch.nn import functional as F

SOURCE = (
    "https://programbox.ru/2022/01/09/"
    "%d0%b2%d1%8b%d0%b2%d0%be%d0%b4-%d1%83%d1%80%d0%b0%d0%b2%d0%bd%d0%b5%d0%bd%d0%b8%d0%b9-"
    "%d0%b4%d0%bb%d1%8f-%d0%be%d0%b1%d1%80%d0%b0%d1%82%d0%bd%d0%be%d0%b3%d0%be-"
    "%d1%80%d0%b0%d1%81%d0%bf%d1%80%d0%be"
)
DESCRIPTION = "gradient penalty, x_hat without requires_grad: autograd.grad raises, D not stepped"
ASK = ["0.weight"]
MUST = [
    [r"x_hat", r"interpolat\w*", r"differentiated tensors?", r"autograd\.grad"],
    [
        r"requires_grad",
        r"does not require grad",
        r"raised",
        r"RuntimeError",
    ],
]
MUST_NOT = [FALSE_OK, CLAIMS_NONFINITE, r"dead (units?|relu|neurons?)", r"create_graph"]
LAMBDA = 10.0


def make_nets():
    G = nn.Sequential(nn.Linear(4, 16), nn.Tanh(), nn.Linear(16, 2))
    D = nn.Sequential(nn.Linear(2, 32), nn.Tanh(), nn.Linear(32, 1))
    return G, D


def step(watch, set_requires_grad: bool = False):
    torch.manual_seed(0)
    G, D = make_nets()
    optD = torch.optim.Adam(D.parameters(), lr=1e-4, betas=(0.5, 0.9))
    g = torch.Generator().manual_seed(1)
    real_data = torch.randn(32, 2, generator=g) * 0.5 + torch.tensor([2.0, -1.0])
    fake_data = G(torch.randn(32, 4, generator=g))
    before = [p.detach().clone() for p in D.parameters()]
    state = {}

    def adversarial():
        return F.binary_cross_entropy_with_logits(
            D(real_data), torch.ones(32, 1)
        ) + F.binary_cross_entropy_with_logits(D(fake_data.detach()), torch.zeros(32, 1))

    adv_only = torch.autograd.grad(adversarial(), list(D.parameters()))  # without the penalty

    def d_step():
        optD.zero_grad()
        adv = adversarial()
        epsilon = torch.rand(32, 1, generator=g)
        x_hat = epsilon * real_data + (1 - epsilon) * fake_data.detach()
        if set_requires_grad:
            x_hat.requires_grad = True
        logits = D(x_hat).sum()
        grad = torch.autograd.grad(
            outputs=logits, inputs=x_hat, grad_outputs=torch.ones(logits.shape), create_graph=True
        )[0]
        gp = LAMBDA * ((grad.norm(2, dim=1) - 1) ** 2).mean()
        state["gp_has_graph"] = gp.requires_grad
        (adv + gp).backward()
        optD.step()

    with watch(D) as w:
        error = expect_raise(d_step, RuntimeError)
    grads = [p.grad for p in D.parameters()]
    moved = any(not torch.equal(p.detach(), b) for p, b in zip(D.parameters(), before, strict=True))
    return Run(w=w, error=error, grads=grads, moved=moved, state=state, adv_only=adv_only)


def truth(run):
    assert run.error is not None and "does not require grad" in str(run.error)
    assert all(gr is None for gr in run.grads)
    assert not run.moved
