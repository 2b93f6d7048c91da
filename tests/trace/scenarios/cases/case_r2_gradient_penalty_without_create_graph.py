"""A WGAN-GP critic step whose gradient penalty calls torch.autograd.grad without
create_graph=True: the input gradient comes back detached, so the penalty is a constant with
no graph, adding it to the loss changes nothing, and the critic's gradient is that of the
Wasserstein term alone.  Nothing raises.

Source: https://nn.labml.ai/gan/wasserstein/gradient_penalty/index.html (the penalty is
computed with torch.autograd.grad(outputs=f, inputs=x, grad_outputs=..., create_graph=True):
"we need to create and retain graph since we have to compute gradients with respect to weight
on this loss").
"""

import torch
from scenario_kit import FALSE_OK, Run
from torch import nn

SOURCE = "https://nn.labml.ai/gan/wasserstein/gradient_penalty/index.html"
DESCRIPTION = "WGAN-GP penalty from autograd.grad without create_graph: a constant, no effect"
ASK = []
MUST = [
    [
        r"penalty",
        r"create_graph",
        r"autograd\.grad",
        r"(no|without a?) graph",
        r"\bconstant\b",
        r"does not depend",
        r"second.order",
        r"double.backward",
        r"detached",
    ]
]
MUST_NOT = [FALSE_OK]


def _critic():
    return nn.Sequential(nn.Linear(6, 16), nn.Tanh(), nn.Linear(16, 1))


def _batch():
    torch.manual_seed(1)
    real, fake = torch.randn(16, 6), torch.randn(16, 6) + 1.0
    eps = torch.rand(16, 1)
    return real, fake, eps


def penalty(critic, real, fake, eps, create_graph):
    x_hat = (eps * real + (1 - eps) * fake).requires_grad_(True)
    f = critic(x_hat)
    (grad,) = torch.autograd.grad(f, x_hat, torch.ones_like(f), create_graph=create_graph)
    return ((grad.norm(2, dim=1) - 1) ** 2).mean()


def step(watch, create_graph=False):
    torch.manual_seed(0)
    critic = _critic()
    opt = torch.optim.Adam(critic.parameters(), lr=1e-4, betas=(0.0, 0.9))
    real, fake, eps = _batch()
    with watch(critic) as w:
        opt.zero_grad()
        loss_w = critic(fake).mean() - critic(real).mean()
        gp = penalty(critic, real, fake, eps, create_graph)
        loss = loss_w + 10.0 * gp
        loss.backward()
        grads = [p.grad.clone() for p in critic.parameters()]
        opt.step()
    return Run(w=w, model=critic, grads=grads, gp_has_graph=gp.requires_grad)


def reference(with_penalty):
    torch.manual_seed(0)
    critic = _critic()
    real, fake, eps = _batch()
    loss = critic(fake).mean() - critic(real).mean()
    if with_penalty:
        loss = loss + 10.0 * penalty(critic, real, fake, eps, create_graph=True)
    return torch.autograd.grad(loss, list(critic.parameters()))


def truth(run):
    assert not run.gp_has_graph
    w_only, with_gp = reference(False), reference(True)
    for g, a in zip(run.grads, w_only, strict=True):
        assert torch.allclose(g, a, rtol=1e-5, atol=1e-8)  # the penalty did nothing
    assert any(not torch.allclose(a, b, rtol=1e-3) for a, b in zip(w_only, with_gp, strict=True))
