"""A normalizing flow of two element-wise affine layers ``z = x * scale + shift`` trained by
maximum likelihood, ``-(log N(z; 0, 1) + log|det J|)``.  The log-determinant is written
``torch.log(scale).sum()`` instead of the log of its absolute value; ``scale`` starts from
``randn`` and has negative entries, so the log-determinant and the loss are NaN.  The gradient is
not: the derivative of ``log(scale)`` is ``1 / scale``, the same as that of ``log|scale|``, so
every gradient is finite and equal to the correct one, and only the loss the user logs is NaN.

Source: https://runebook.dev/en/docs/pytorch/distributions/torch.distributions.transforms.Transform.log_abs_det_jacobian
("The term log|det(...)| is precisely what log_abs_det_jacobian calculates"; "The most frequent
problem is an incorrect implementation of the log_abs_det_jacobian method itself"; its affine
example: "The log-abs-det-Jacobian is log|a|").
"""

import torch
from scenario_kit import FALSE_OK, Run
from torch import nn

SOURCE = (
    "https://runebook.dev/en/docs/pytorch/distributions/"
    "torch.distributions.transforms.Transform.log_abs_det_jacobian"
)
DESCRIPTION = "flow log-det as log(scale) with negative scales: loss NaN, gradients finite"
ASK = []
MUST = [
    [r"\bnan\b", r"non-?finite"],
    [r"\bloss\b"],
    [r"\blog\b", r"LogBackward", r"negative", r"log_?abs_?det", r"determinant", r"\babs\b"],
]
MUST_NOT = [
    FALSE_OK,
    r"non-?finite gradient",
    r"nan gradient",
    r"gradients?[^\n]{0,20}(is|are|was|were|became) nan",
    r"got nan",
]


class Affine(nn.Module):
    def __init__(self, dim: int, absolute: bool):
        super().__init__()
        self.scale = nn.Parameter(torch.randn(dim))
        self.shift = nn.Parameter(torch.zeros(dim))
        self.absolute = absolute

    def forward(self, x):
        scale = self.scale.abs() if self.absolute else self.scale
        return x * self.scale + self.shift, torch.log(scale).sum()


class Flow(nn.Module):
    def __init__(self, dim: int = 4, absolute: bool = False):
        super().__init__()
        self.layers = nn.ModuleList([Affine(dim, absolute), Affine(dim, absolute)])

    def forward(self, x):
        log_det = x.new_zeros(())
        for layer in self.layers:
            x, ld = layer(x)
            log_det = log_det + ld
        return x, log_det


def nll(model, x):
    z, log_det = model(x)
    base = torch.distributions.Normal(0.0, 1.0).log_prob(z).sum(1)
    return -(base + log_det).mean()


def step(watch, absolute: bool = False):
    torch.manual_seed(0)
    model = Flow(absolute=absolute)
    g = torch.Generator().manual_seed(1)
    x = torch.randn(128, 4, generator=g) * 2 + 1
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    before = {n: p.detach().clone() for n, p in model.named_parameters()}
    with watch(model) as w:
        opt.zero_grad()
        loss = nll(model, x)
        loss.backward()
        grads = {n: p.grad.clone() for n, p in model.named_parameters()}
        opt.step()
    # plain torch: the correct log|det| on the same starting point
    reference = Flow(absolute=True)
    reference.load_state_dict(before)
    nll(reference, x).backward()
    ref_grads = {n: p.grad for n, p in reference.named_parameters()}
    return Run(w=w, model=model, loss=loss.item(), grads=grads, ref_grads=ref_grads, before=before)


def truth(run):
    assert bool((run.before["layers.0.scale"] < 0).any())  # some scales start negative
    assert run.loss != run.loss  # the loss is NaN ...
    for n, g in run.grads.items():  # ... while every gradient is finite and the correct one
        assert bool(torch.isfinite(g).all()), n
        assert torch.allclose(g, run.ref_grads[n], atol=1e-5), n
    for p in run.model.parameters():
        assert bool(torch.isfinite(p).all())
