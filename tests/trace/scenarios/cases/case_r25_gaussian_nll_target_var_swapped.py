"""A heteroscedastic regressor trained with ``nn.GaussianNLLLoss`` called as ``loss(mean, var,
target)``: the loss's positional order is ``(input, target, var)``, so the predicted variance is
read as the target and the targets as the variance.  The targets are all positive (they are
prices), so nothing raises: the loss computed is ``0.5 * (log y + (mean - var)**2 / y)``, whose
log term does not depend on the model at all and whose other term pulls the mean head and the
variance head towards each other, each example weighted by ``1 / y``.  The gradient at the two
heads' outputs is equal and opposite for every example; neither head is fitted to the targets.
Every gradient is finite and nonzero.

Source: https://typeerror.org/docs/pytorch/generated/torch.nn.gaussiannllloss ("The targets are
treated as samples from Gaussian distributions with expectations and variances predicted by the
neural network"; "Input: (N, *)"; "Target: (N, *), same shape as the input"; "Var: (N, 1) or (N,
*), same shape as the input"; the example calls ``loss(input, target, var)``).  Adapted: a
``Linear(4, 32), Tanh`` body with a mean head and a variance head ``softplus(Linear(32, 1)) +
1e-6``, 128 positive targets ``exp(0.3 x0 + 0.2 noise)``, Adam at 1e-3.
"""

import copy

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://typeerror.org/docs/pytorch/generated/torch.nn.gaussiannllloss"
DESCRIPTION = "GaussianNLLLoss called (mean, var, target): variance read as target, target as var"
ASK = []
MUST = [
    [
        r"swap\w*",
        r"(argument|parameter)s?[^\n]{0,20}order",
        r"order of (the )?(argument|input|parameter)s",
        r"positional",
        r"var\w*[^\n]{0,40}(as|for|in place of|instead of)[^\n]{0,20}target",
        r"target\w*[^\n]{0,40}(as|for|in place of|instead of)[^\n]{0,20}var",
    ],
    [r"GaussianNLL", r"gaussian_nll", r"variance", r"\bvar\b"],
]
MUST_NOT = [
    FALSE_OK,
    CLAIMS_NONFINITE,
    r"\bdead\b",
    r"requires_grad\s*(=|is|was)?\s*False",
    r"not in (the |any )?optimi[sz]er",
]


class Regressor(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(4, 32), nn.Tanh())
        self.mean = nn.Linear(32, 1)
        self.var = nn.Linear(32, 1)

    def forward(self, x):
        h = self.body(x)
        return self.mean(h), F.softplus(self.var(h)) + 1e-6


def data():
    g = torch.Generator().manual_seed(1)
    x = torch.randn(128, 4, generator=g)
    y = torch.exp(0.3 * x[:, :1] + 0.2 * torch.randn(128, 1, generator=g))
    return x, y


def loss_of(mean, var, y, swapped):
    criterion = nn.GaussianNLLLoss()
    return criterion(mean, var, y) if swapped else criterion(mean, y, var)


def step(watch, swapped=True):
    torch.manual_seed(0)
    model = Regressor()
    start = copy.deepcopy(model)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    x, y = data()
    with watch(model) as w:
        optimizer.zero_grad()
        mean, var = model(x)
        loss = loss_of(mean, var, y, swapped)
        loss.backward()
        grads = {n: p.grad.detach().clone() for n, p in model.named_parameters()}
        optimizer.step()
    # on a copy of the starting model: the gradient at the heads' outputs, and the right loss's
    mean, var = start(x)
    at_outputs = torch.autograd.grad(loss_of(mean, var, y, swapped), [mean, var])
    right = loss_of(*start(x), y, swapped=False)
    wanted = dict(
        zip(
            [n for n, _ in start.named_parameters()],
            torch.autograd.grad(right, list(start.parameters())),
            strict=True,
        )
    )
    return Run(w=w, y=y, grads=grads, at_outputs=at_outputs, wanted=wanted, loss=loss.item())


def truth(run):
    assert bool((run.y > 0).all())
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
    g_mean, g_var = run.at_outputs
    assert torch.allclose(g_mean, -g_var, atol=1e-7)  # equal and opposite: mean pulled to var
    differ = [n for n, g in run.grads.items() if not torch.allclose(g, run.wanted[n], atol=1e-6)]
    assert set(differ) == set(run.wanted)
