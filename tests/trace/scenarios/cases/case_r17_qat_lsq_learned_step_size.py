"""Control: quantisation-aware training with learned step sizes (LSQ). Each linear layer keeps its
weights in float32 and fake-quantises them in the forward pass, ``s * round(clamp(w / s, -128,
127))``, with the rounding passed straight through (``(q.round() - q).detach() + q``) and the
per-tensor step size ``s`` an ``nn.Parameter`` trained with the rest (its gradient scaled by ``1 /
sqrt(numel * 127)`` as LSQ does). Every weight, bias and step size gets a finite nonzero gradient
and moves; the weights the forward pass uses lie on the grid of the current step size.

Source: https://www.ibm.com/think/topics/quantization-aware-training ("Straight-through estimator
(STE) is used to approximate the gradient by treating the quantization operation as an identity
function"; "The model parameters remain in floating-point precision during training to avoid issues
like underflow from small gradient updates"; "learned step size quantization (LSQ) learns scaling
factors"). Adapted: a tanh MLP classifier with two LSQ linear layers, Adam at 1e-3.
"""

import torch
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://www.ibm.com/think/topics/quantization-aware-training"
DESCRIPTION = "control: LSQ fake-quant, float master weights, STE rounding, learned step sizes"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_ERROR,
    CLAIMS_NONFINITE,
    r"(did not|didn't|never) (move|change|update)",
    r"unchanged",
    r"\b(zero|no) gradient",
    r"all-zero",
]


class LSQLinear(nn.Linear):
    def __init__(self, n_in, n_out):
        super().__init__(n_in, n_out)
        self.step_size = nn.Parameter(self.weight.detach().abs().mean() * 2 / 127**0.5)

    def forward(self, x):
        g = 1.0 / (self.weight.numel() * 127) ** 0.5
        s = self.step_size * g + (self.step_size - self.step_size * g).detach()  # grad scale
        q = torch.clamp(self.weight / s, -128, 127)
        q = (q.round() - q).detach() + q  # straight-through rounding
        return F.linear(x, q * s, self.bias)


def data():
    g = torch.Generator().manual_seed(1)
    x = torch.randn(64, 20, generator=g)
    return x, torch.randint(0, 3, (64,), generator=g)


def step(watch):
    torch.manual_seed(0)
    model = nn.Sequential(LSQLinear(20, 32), nn.Tanh(), LSQLinear(32, 3))
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    x, y = data()
    start = {n: p.detach().clone() for n, p in model.named_parameters()}
    grads, losses = [], []
    with watch(model) as w:
        for _ in range(2):
            optimizer.zero_grad()
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            grads.append({n: p.grad.detach().clone() for n, p in model.named_parameters()})
            losses.append(loss.item())
            optimizer.step()
    end = {n: p.detach().clone() for n, p in model.named_parameters()}
    return Run(w=w, model=model, start=start, end=end, grads=grads, losses=losses)


def truth(run):
    for gs in run.grads:
        for n, g in gs.items():
            assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
    for n in run.start:
        assert not torch.equal(run.start[n], run.end[n]), n
    for layer in (run.model[0], run.model[2]):
        with torch.no_grad():
            k = torch.clamp(layer.weight / layer.step_size, -128, 127).round()
            used = k * layer.step_size
        assert not torch.equal(used, layer.weight)  # float master weights, off the grid
        assert bool((k.abs() <= 128).all())
