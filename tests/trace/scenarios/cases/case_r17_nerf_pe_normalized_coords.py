"""Control: a coordinate MLP with NeRF's positional encoding fitting a 32x32 image, the pixel
coordinates scaled to [0, 1] before the encoding as the source's function expects (it multiplies by
``2 pi`` to reach [0, 2 pi]). The sines and cosines of the 8 frequencies vary across pixels, the
64-unit ReLU MLP's output varies across the image, every hidden unit is active on some pixels, every
gradient is finite and nonzero and the loss falls over the two Adam steps.

Source: https://github.com/AMfeta99/Advanced_Computer_Vision ("it is necesarry to encode input
signals in order to capture high-frequency variations in colour and geometry"; "def
positional_encoding(in_tensor, num_frequencies, min_freq_exp, max_freq_exp)": "# Scale input tensor
to [0, 2 * pi]", "scaled_in_tensor = 2 * np.pi * in_tensor", "freqs = 2 ** torch.linspace(
min_freq_exp, max_freq_exp, num_frequencies"). Adapted: frequencies ``2 ** torch.linspace(0, 7,
8)``, a synthetic image, Adam at 5e-3, two watched iterations.
"""

import math

import torch
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://github.com/AMfeta99/Advanced_Computer_Vision"
DESCRIPTION = "control: positional encoding on pixel coordinates scaled to [0, 1], ReLU MLP fit"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    r"dead",
    r"all-zero",
    r"constant",
    r"(same|identical) (input|feature)s?",
]
SIZE = 32


def positional_encoding(in_tensor, num_frequencies=8, min_freq_exp=0.0, max_freq_exp=7.0):
    scaled_in_tensor = 2 * math.pi * in_tensor
    freqs = 2 ** torch.linspace(min_freq_exp, max_freq_exp, num_frequencies)
    scaled_inputs = scaled_in_tensor.unsqueeze(-1) * freqs
    encoded = torch.cat([torch.sin(scaled_inputs), torch.cos(scaled_inputs)], dim=-1)
    return encoded.view(*in_tensor.shape[:-1], -1)


def image():
    i, j = torch.meshgrid(torch.arange(SIZE), torch.arange(SIZE), indexing="ij")
    u, v = i / (SIZE - 1), j / (SIZE - 1)
    img = 0.5 + 0.3 * torch.sin(6 * u) * torch.cos(9 * v) + 0.2 * ((u - 0.5) ** 2 + v**2 < 0.2)
    return torch.stack([i, j], -1).reshape(-1, 2).float(), img.reshape(-1, 1)


def step(watch):
    torch.manual_seed(2)
    model = nn.Sequential(
        nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 1)
    )
    optimizer = torch.optim.Adam(model.parameters(), lr=5e-3)
    pixels, target = image()
    feats = positional_encoding(pixels / (SIZE - 1))  # coordinates in [0, 1]
    losses, outs, grads, hidden = [], [], [], []
    with watch(model) as w:
        for _ in range(2):
            with torch.no_grad():
                h1 = model[1](model[0](feats))
                hidden += [h1, model[3](model[2](h1))]
            optimizer.zero_grad()
            out = model(feats)
            loss = F.mse_loss(out, target)
            loss.backward()
            grads.append([p.grad.detach().clone() for p in model.parameters()])
            optimizer.step()
            losses.append(loss.item())
            outs.append(out.detach())
    return Run(
        w=w, feats=feats, target=target, losses=losses, outs=outs, grads=grads, hidden=hidden
    )


def truth(run):
    assert float(run.feats.std(dim=0).min()) > 0.3  # every feature varies across pixels
    for out in run.outs:
        assert float(out.std()) > 0.02 * float(run.target.std())
    assert run.losses[1] < run.losses[0]
    for h in run.hidden:  # both hidden layers, at both watched forwards
        assert bool(((h > 0).sum(0) > 0).all())  # no dead ReLU unit
    for gs in run.grads:
        for g in gs:
            assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0)
