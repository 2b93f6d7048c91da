"""StyleGAN2's path length regularization with its running target ``a`` (the exponential moving
average of the path lengths) updated as ``self.pl_mean = self.pl_mean.lerp(lengths.mean(), 0.01)``
without ``detach``.  The first regularization step runs and trains, but the buffer now holds a
tensor attached to that step's graph (the double-backward graph of ``autograd.grad(...,
create_graph=True)``).  At the second step the new average is built on the old one, the penalty's
backward walks into the first step's graph, whose saved tensors were freed by its backward, and
raises ``RuntimeError: Trying to backward through the graph a second time``: the second step
never updates the generator.

Source: https://paperswithcode.com/method/path-length-regularization ("To avoid explicit
computation of the Jacobian matrix, we use the identity J_w^T y = nabla_w (g(w) . y), which is
efficiently computable using standard backpropagation. The constant a is set dynamically during
optimization as the long-running exponential moving average of the lengths ||J_w^T y||_2, allowing
the optimization to find a suitable global scale by itself").  Adapted: a mapping network
``Linear(8, 16), Tanh, Linear(16, 16)`` to ``w`` and a synthesis network ``Linear(16, 64), Tanh,
Linear(64, 192, bias=False)`` to 3 x 8 x 8 images (smooth activations, and no output bias, so that
every parameter reaches the penalty), two lazy regularization steps of 16 latents with the
penalty weight 2, ``y`` scaled by ``1 / sqrt(H W)``, Adam at 2e-3.
"""

import math

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn

SOURCE = "https://paperswithcode.com/method/path-length-regularization"
DESCRIPTION = "PL reg: pl_mean EMA not detached: second step backward into the freed graph (raises)"
ASK = []
MUST = [
    [r"\braised\b", r"RuntimeError", r"exception", r"\berror\b"],
    [
        r"second time",
        r"(graph|saved tensors?)[^\n]{0,60}(freed|released|previous|earlier|first)",
        r"retain_graph",
        r"pl_mean",
        r"(moving average|ema|running)[^\n]{0,80}(detach|graph)",
        r"detach\w*",
    ],
]
MUST_NOT = [FALSE_OK, CLAIMS_NONFINITE, r"\bdead\b"]


class Generator(nn.Module):
    def __init__(self):
        super().__init__()
        self.mapping = nn.Sequential(nn.Linear(8, 16), nn.Tanh(), nn.Linear(16, 16))
        self.synthesis = nn.Sequential(
            nn.Linear(16, 64), nn.Tanh(), nn.Linear(64, 3 * 8 * 8, bias=False)
        )
        self.register_buffer("pl_mean", torch.zeros(()))

    def forward(self, z):
        w = self.mapping(z)
        return self.synthesis(w).view(-1, 3, 8, 8), w


def path_lengths(model, g):
    z = torch.randn(16, 8, generator=g)
    img, w = model(z)
    y = torch.randn(img.shape, generator=g) / math.sqrt(8 * 8)
    (grad,) = torch.autograd.grad((img * y).sum(), w, create_graph=True)
    return grad.pow(2).sum(1).sqrt()


def step(watch, detach=False):
    torch.manual_seed(0)
    model = Generator()
    optimizer = torch.optim.Adam(model.parameters(), lr=2e-3, betas=(0.0, 0.99))
    g = torch.Generator().manual_seed(1)
    done, error = [], None
    try:
        with watch(model) as w:
            for _ in range(2):
                optimizer.zero_grad()
                lengths = path_lengths(model, g)
                if detach:
                    with torch.no_grad():
                        model.pl_mean.copy_(model.pl_mean.lerp(lengths.mean(), 0.01))
                else:
                    model.pl_mean = model.pl_mean.lerp(lengths.mean(), 0.01)
                penalty = (lengths - model.pl_mean).pow(2).mean() * 2.0
                penalty.backward()
                done.append({n: p.grad.detach().clone() for n, p in model.named_parameters()})
                optimizer.step()
    except RuntimeError as e:
        error = e
    return Run(w=w, model=model, done=done, error=error)


def truth(run):
    assert len(run.done) == 1  # the first step only
    assert run.error is not None and "second time" in str(run.error)
    assert run.model.pl_mean.requires_grad  # the buffer holds a graph
    for n, g in run.done[0].items():
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
