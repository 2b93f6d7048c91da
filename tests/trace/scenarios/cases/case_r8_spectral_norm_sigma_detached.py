"""A GAN discriminator with a hand-written spectral normalization: each layer divides its weight
by ``sigma = u @ W @ v`` from one power iteration, and ``sigma`` is computed from
``self.weight.data``, outside the autograd graph.  The forward is exactly that of spectral
normalization, but the gradient lacks the term through ``sigma``: ``d(W / sigma)/dW`` is taken as
``1 / sigma``, so the weight's gradient lacks ``-(<G, W> / sigma^2) u v^T`` (``G`` the gradient
with respect to the normalised weight).  Every gradient is finite and nonzero, and wrong.

Source: https://github.com/rdevon/cortex/pull/57 ("Fix spectral norm": "The computation of sigma
should be part of the computational graph.").
"""

import torch
from scenario_kit import FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://github.com/rdevon/cortex/pull/57"
DESCRIPTION = "hand-written spectral norm, sigma from weight.data: gradient misses sigma's term"
ASK = []
MUST = [
    [r"\.data\b", r"no_grad", r"detach"],
    [r"\b[02]\.weight\b", r"sigma", r"spectral"],
]
MUST_NOT = [FALSE_OK, r"\bnan\b", r"non-?finite"]


class SNLinear(nn.Module):
    """Linear layer divided by its largest singular value, estimated by power iteration."""

    def __init__(self, n_in: int, n_out: int):
        super().__init__()
        layer = nn.Linear(n_in, n_out)
        self.weight, self.bias = layer.weight, layer.bias
        self.register_buffer("u", F.normalize(torch.randn(n_out), dim=0))
        self.last_uv = None

    def forward(self, x):
        with torch.no_grad():
            v = F.normalize(self.weight.t() @ self.u, dim=0)
            u = F.normalize(self.weight @ v, dim=0)
            self.u.copy_(u)
        sigma = u @ self.weight.data @ v  # a constant: no gradient flows through sigma
        self.last_uv = (u.clone(), v.clone())
        return F.linear(x, self.weight / sigma, self.bias)


def data():
    g = torch.Generator().manual_seed(1)
    real = torch.randn(16, 8, generator=g) + 1.0
    fake = torch.randn(16, 8, generator=g) - 1.0
    return real, fake


def d_loss(disc, real, fake):
    """Real and fake in one call (one power iteration per step), labels 1 and 0."""
    logits = disc(torch.cat([real, fake]))
    labels = torch.cat([torch.ones(len(real), 1), torch.zeros(len(fake), 1)])
    return F.binary_cross_entropy_with_logits(logits, labels)


def step(watch):
    torch.manual_seed(0)
    disc = nn.Sequential(SNLinear(8, 32), nn.LeakyReLU(0.2), SNLinear(32, 1))
    real, fake = data()
    opt = torch.optim.Adam(disc.parameters(), lr=2e-4, betas=(0.5, 0.999))
    with watch(disc) as w:
        opt.zero_grad()
        d_loss(disc, real, fake).backward()
        grads = {n: p.grad.clone() for n, p in disc.named_parameters()}
        weights = {n: p.detach().clone() for n, p in disc.named_parameters()}
        uv = [disc[0].last_uv, disc[2].last_uv]
        opt.step()
    return Run(w=w, disc=disc, grads=grads, weights=weights, uv=uv, real=real, fake=fake)


def reference_grads(run):
    """The same forward with sigma inside the graph (u and v held fixed, as spectral norm does)."""
    w0 = run.weights["0.weight"].clone().requires_grad_(True)
    w2 = run.weights["2.weight"].clone().requires_grad_(True)
    (u0, v0), (u2, v2) = run.uv

    def disc(x):
        h = F.linear(x, w0 / (u0 @ w0 @ v0), run.weights["0.bias"])
        return F.linear(F.leaky_relu(h, 0.2), w2 / (u2 @ w2 @ v2), run.weights["2.bias"])

    g0, g2 = torch.autograd.grad(d_loss(disc, run.real, run.fake), (w0, w2))
    return {"0.weight": g0, "2.weight": g2}


def truth(run):
    ref = reference_grads(run)
    for n in ("0.weight", "2.weight"):
        got = run.grads[n]
        assert bool(torch.isfinite(got).all()) and bool(got.abs().sum() > 0), n
        assert not torch.allclose(got, ref[n], rtol=1e-3, atol=1e-6), n  # the sigma term is missing
        (u, v) = run.uv[0] if n == "0.weight" else run.uv[1]
        # what is missing is the term through sigma, c * u v^T with c = <G, W> / sigma^2
        diff = got - ref[n]
        c = float(u @ diff @ v)
        assert abs(c) > 0
        assert torch.allclose(diff, c * torch.outer(u, v), atol=1e-6), n
