"""Quantisation-aware training written as "quantise the stored weights after every update": after
each ``optimizer.step()`` the weights are rounded in place, under ``no_grad``, back onto their int8
grid (per-tensor scale fixed once from the initial weights, ``s = max|w| / 127``). Adam's first
updates move each weight by about the learning rate, 1e-4, far less than half a grid step (7e-4 to
9e-4 here), so the rounding puts every weight back exactly where it was: across two iterations no
weight changes at all, although every weight's gradient is finite and nonzero and Adam's moments
fill up. Only the biases, left in float, move. Nothing raises.

Source: https://www.ibm.com/think/topics/quantization-aware-training ("the model weights and
activations are quantized after each gradient update, like a projected gradient descent approach";
"The model parameters remain in floating-point precision during training to avoid issues like
underflow from small gradient updates"). Adapted: a tanh MLP classifier, int8 symmetric per-tensor
grids, Adam at 1e-4, two watched iterations; the float master copy the page keeps is left out.
"""

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://www.ibm.com/think/topics/quantization-aware-training"
DESCRIPTION = "QAT rounding the stored weights back to int8 after each Adam step: updates undone"
ASK = ["0.weight"]
MUST = [
    [
        r"(did not|didn't|never|not|no) (move|change|update)\w*",
        r"unchanged",
        r"round\w* (away|off|back)",
        r"undone|revert\w*|overwr\w*",
    ],
]
MUST_NOT = [
    FALSE_OK,
    CLAIMS_NONFINITE,
    r"not in (the |any )?optimizer",
    r"\b(zero|no) gradient",
    r"requires_grad\s*=?\s*False",
]


def data():
    g = torch.Generator().manual_seed(1)
    x = torch.randn(64, 20, generator=g)
    return x, torch.randint(0, 3, (64,), generator=g)


def quantize_(w, scale):
    with torch.no_grad():
        w.copy_(torch.clamp(torch.round(w / scale), -128, 127) * scale)


def step(watch):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(20, 32), nn.Tanh(), nn.Linear(32, 3))
    weights = [model[0].weight, model[2].weight]
    scales = [float(w.detach().abs().max()) / 127 for w in weights]
    for w_, s in zip(weights, scales, strict=True):
        quantize_(w_, s)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-4)
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
            for w_, s in zip(weights, scales, strict=True):
                quantize_(w_, s)  # back onto the int8 grid
    end = {n: p.detach().clone() for n, p in model.named_parameters()}
    moments = {n: optimizer.state[p]["exp_avg"].clone() for n, p in model.named_parameters()}
    return Run(
        w=w, start=start, end=end, grads=grads, losses=losses, scales=scales, moments=moments
    )


def truth(run):
    for gs in run.grads:
        for n, g in gs.items():
            assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
    for n in ("0.weight", "2.weight"):
        assert torch.equal(run.start[n], run.end[n]), n  # not one weight moved
        assert bool(run.moments[n].abs().sum() > 0), n  # although Adam's moments are filled
    assert min(run.scales) / 2 > 1e-4  # the update is below half a grid step
    for n in ("0.bias", "2.bias"):
        assert not torch.equal(run.start[n], run.end[n]), n
    assert run.losses[0] != run.losses[1]  # only the biases changed the loss
