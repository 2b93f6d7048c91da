"""A Hamiltonian neural network ported from JAX to PyTorch: the network gives a scalar energy
``H(q, p)``, the time derivatives are read from its input gradient, ``dq/dt = dH/dp`` and ``dp/dt =
-dH/dq``, taken with ``torch.autograd.grad(H.sum(), x)``, and the loss compares them with the
observed ones.  Without ``create_graph=True`` the input gradient is returned as a plain tensor with
no graph: the loss does not require grad and ``loss.backward()`` raises ``RuntimeError: element 0
of tensors does not require grad and does not have a grad_fn``.  No parameter gets a gradient,
nothing moves.

Source: https://www.scibits.blog/posts/hnn ("Hamiltonian Neural Networks (HNNs) are a powerful
approach to learning physics-preserving dynamics by modeling the Hamiltonian function H(q,p) of a
system, rather than its vector field directly. This tutorial will guide you through the theory and
implementation of HNNs using JAX and Flax").  Adapted: the JAX gradient written with
``torch.autograd.grad`` (whose graph is kept only on request); a mass-spring system ``H = (q^2 +
p^2) / 2``, 128 observed states with noisy time derivatives, the energy network ``Linear(2, 64),
Tanh, Linear(64, 64), Tanh, Linear(64, 1)``, Adam at 1e-3.
"""

import torch
from scenario_kit import FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://www.scibits.blog/posts/hnn"
DESCRIPTION = "HNN dH/dx by autograd.grad without create_graph: loss has no graph, backward raises"
ASK = []
MUST = [
    [r"\braised\b", r"RuntimeError", r"exception", r"\berror\b"],
    [
        r"create_graph",
        r"autograd\.grad",
        r"(no|without a?) (autograd )?(graph|history)",
        r"second[- ]order|double[- ]backward|higher[- ]order",
        r"input gradient|gradient (of|w\.r\.t\.) (the )?input",
        r"detached",
    ],
]
MUST_NOT = [FALSE_OK]


def states():
    g = torch.Generator().manual_seed(1)
    x = torch.randn(128, 2, generator=g)  # columns q, p
    dxdt = torch.stack([x[:, 1], -x[:, 0]], 1) + 0.01 * torch.randn(128, 2, generator=g)
    return x, dxdt


def energy_net():
    return nn.Sequential(
        nn.Linear(2, 64), nn.Tanh(), nn.Linear(64, 64), nn.Tanh(), nn.Linear(64, 1)
    )


def step(watch, create_graph=False):
    torch.manual_seed(0)
    model = energy_net()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    x, dxdt = states()
    x = x.clone().requires_grad_(True)
    before = {n: p.detach().clone() for n, p in model.named_parameters()}
    error, loss = None, None
    try:
        with watch(model) as w:
            optimizer.zero_grad()
            energy = model(x).sum()
            (dh,) = torch.autograd.grad(energy, x, create_graph=create_graph)
            field = torch.stack([dh[:, 1], -dh[:, 0]], 1)  # (dH/dp, -dH/dq)
            loss = F.mse_loss(field, dxdt)
            loss.backward()
            optimizer.step()
    except RuntimeError as e:
        error = e
    return Run(w=w, model=model, before=before, error=error, loss=loss)


def truth(run):
    assert run.error is not None
    assert "does not require grad and does not have a grad_fn" in str(run.error)
    assert not run.loss.requires_grad
    for n, p in run.model.named_parameters():
        assert p.grad is None and torch.equal(p.detach(), run.before[n]), n
