"""A coordinate MLP (NeRF's positional encoding and ReLU MLP, fitting a 32x32 image) fed the raw
integer pixel coordinates instead of coordinates scaled to [0, 1]. The encoding computes ``sin(2 pi
2^k x)`` and ``cos(2 pi 2^k x)`` with integer frequencies ``2^k``; for an integer ``x`` every
argument is a whole multiple of ``2 pi``, so every sine is 0 and every cosine 1 up to float32
rounding (below 0.02 here). All 1024 pixels get practically the same 32 input features, the MLP
outputs practically the same value for every pixel, and the fit can only learn the image's mean:
"loss not decreasing". Every gradient is finite; nothing raises.

Source: https://www.codegenes.net/blog/nerf-positional-encoding-pytorch ("Before applying positional
encoding, you need to ensure that your input coordinates are in the appropriate range. In most
cases, the input coordinates should be normalized to the range [-1,1] or [0,1]"; "gamma(x) =
[sin(2^0 pi x), cos(2^0 pi x), ..., sin(2^{L-1} pi x), cos(2^{L-1} pi x)]"). Adapted: the encoding
of https://github.com/AMfeta99/Advanced_Computer_Vision (``2 * np.pi * in_tensor``, frequencies ``2
** torch.linspace(0, 7, 8)``) on pixel indices 0..31, a synthetic image, a 64-unit ReLU MLP, Adam at
5e-3, two watched iterations.
"""

import math

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://www.codegenes.net/blog/nerf-positional-encoding-pytorch"
DESCRIPTION = "NeRF positional encoding on integer pixel coordinates: sin 0, cos 1 for every pixel"
ASK = []
MUST = [
    [
        r"constant",
        r"(same|identical) (input|feature|value|output)s?",
        r"(no|zero|tiny|low|small) (variance|spread)",
        r"integer",
        r"normali[sz]\w*",
        r"coordinates?",
        r"multiples? of 2",
    ],
]
MUST_NOT = [FALSE_OK, CLAIMS_NONFINITE]
SIZE = 32


def positional_encoding(in_tensor, num_frequencies=8, min_freq_exp=0.0, max_freq_exp=7.0):
    scaled_in_tensor = 2 * math.pi * in_tensor  # the source's "Scale input tensor to [0, 2 * pi]"
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
    feats = positional_encoding(pixels)  # raw pixel indices 0..31
    losses, outs = [], []
    with watch(model) as w:
        for _ in range(2):
            optimizer.zero_grad()
            out = model(feats)
            loss = F.mse_loss(out, target)
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
            outs.append(out.detach())
    return Run(w=w, feats=feats, target=target, losses=losses, outs=outs)


def truth(run):
    assert float(run.feats.std(dim=0).max()) < 0.02  # every feature the same for every pixel
    per_coord = run.feats.view(-1, 2, 16)  # per coordinate: 8 sines, then 8 cosines
    assert float(per_coord[..., :8].abs().max()) < 0.02  # sines ~ 0
    assert float((per_coord[..., 8:] - 1).abs().max()) < 1e-3  # cosines ~ 1
    for out in run.outs:
        assert float(out.std()) < 0.02 * float(run.target.std())  # one value for every pixel
    assert all(math.isfinite(v) for v in run.losses)
