"""Control: quantization-aware training with a straight-through estimator.  The layer's weight is
rounded to a grid of 1/8 in the forward, written ``w + (round(w * 8) / 8 - w).detach()``: the
forward uses the rounded values, the backward treats the rounding as the identity, so the
weight gets the gradient it would get without rounding (at the rounded point) and trains.

Source: https://theneuralbase.com/quantization-fundamentals/learn/intermediate/straight-through-estimator/
("During training, pretend the quantization function is the identity function (does nothing)
so gradients flow cleanly backward, even though the forward pass uses the actual quantized
values").
"""

import torch
from scenario_kit import CLAIMS_NO_ZERO_GRAD, CLAIMS_NONFINITE, HEALTHY_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = (
    "https://theneuralbase.com/quantization-fundamentals/learn/intermediate/"
    "straight-through-estimator/"
)
DESCRIPTION = "control: STE w + (round(w*8)/8 - w).detach(): weights get gradients and train"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_NO_ZERO_GRAD,
    r"all-zero",
    r"no gradient",
    r"\bdead\b",
    r"(cut|stopped|blocked) (by|at) (the |a )?(detach|round)",
]


def ste_round(w, scale=8.0):
    return w + (torch.round(w * scale) / scale - w).detach()


class QuantLinear(nn.Linear):
    def forward(self, x):
        return F.linear(x, ste_round(self.weight), self.bias)


def step(watch):
    torch.manual_seed(0)
    model = nn.Sequential(QuantLinear(6, 16), nn.ReLU(), QuantLinear(16, 2))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    g = torch.Generator().manual_seed(1)
    x, y = torch.randn(32, 6, generator=g), torch.randn(32, 2, generator=g)
    before = [p.detach().clone() for p in model.parameters()]
    with watch(model) as w:
        opt.zero_grad()
        F.mse_loss(model(x), y).backward()
        grads = [p.grad.clone() for p in model.parameters()]
        opt.step()
    return Run(w=w, model=model, grads=grads, before=before, batch=(x, y))


def truth(run):
    # the reference: a plain network whose weights are the rounded ones
    x, y = run.batch
    w0, b0, w2, b2 = [t.clone() for t in run.before]
    ref = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 2))
    with torch.no_grad():
        ref[0].weight.copy_(torch.round(w0 * 8) / 8)
        ref[0].bias.copy_(b0)
        ref[2].weight.copy_(torch.round(w2 * 8) / 8)
        ref[2].bias.copy_(b2)
    expected = torch.autograd.grad(F.mse_loss(ref(x), y), list(ref.parameters()))
    for gr, e in zip(run.grads, expected, strict=True):
        assert torch.allclose(gr, e, atol=1e-6) and bool(gr.abs().sum() > 0)
    for p, b in zip(run.model.parameters(), run.before, strict=True):
        assert not torch.equal(p.detach(), b)
