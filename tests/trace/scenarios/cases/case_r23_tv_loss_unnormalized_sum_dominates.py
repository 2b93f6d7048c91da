"""A denoiser trained with a squared error plus a total-variation (TV) smoothness term written as a
plain sum, ``weight * (tv_h + tv_w)``, next to a data term that is a mean (``F.mse_loss``).  The
sum runs over every pair of neighbouring pixels of the batch (7680 differences for 16 images of
16 x 16), so with ``weight = 0.01`` it outweighs the mean squared error from the first step (1.5
against 0.78, and twice its gradient), and it keeps pulling after the data term would have
settled: after 40 steps the outputs are almost flat (their summed squared neighbour differences
under 1% of the clean images') and the denoiser is further from the clean images than its noisy
input.  Every gradient is finite and nonzero; nothing raises.

Source: https://huggingface.co/datasets/nvidia/Nemotron-CC-Math-v1 (page "Implement Total
Variation Loss in PyTorch": ``def compute_total_variation_loss(img, weight): tv_h =
((img[:,:,1:,:] - img[:,:,:-1,:]).pow(2)).sum() ... return weight * (tv_h + tv_w)``; "Another
implementation ... normalizes the total variation loss ... divides ... by the product of the image
dimensions and batch size").  Adapted: the unnormalised function with ``weight = 0.01`` added to
``F.mse_loss`` of a ``Conv2d(1, 8, 3)``, ``Tanh``, ``Conv2d(8, 1, 3)`` denoiser, 16 blocky
16 x 16 images with noise of 0.2, Adam at 0.01, 40 steps before the watched one.
"""

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = (
    "https://huggingface.co/datasets/nvidia/Nemotron-CC-Math-v1 (page 'Implement Total Variation"
    " Loss in PyTorch')"
)
DESCRIPTION = "TV term as a plain sum (weight 0.01) next to a mean MSE: the TV gradient dominates"
ASK = []
MUST = [
    [r"total[- ]variation", r"\bTV\b", r"tv_", r"smoothness"],
    [
        r"dominat\w*",
        r"outweigh\w*",
        r"un-?normali[sz]ed",
        r"not (normali[sz]ed|averaged|divided)",
        r"\bsum(med)?\b",
        r"(scale|magnitude) of the (terms?|losses)",
        r"(times|x) (larger|bigger|the)",
    ],
]
MUST_NOT = [FALSE_OK, CLAIMS_NONFINITE, r"all[- ]zero", r"\bzero grad\w*"]
WEIGHT = 0.01
STEPS = 40


def tv_sum(img, weight):
    """The page's first function: unnormalised."""
    tv_h = (img[:, :, 1:, :] - img[:, :, :-1, :]).pow(2).sum()
    tv_w = (img[:, :, :, 1:] - img[:, :, :, :-1]).pow(2).sum()
    return weight * (tv_h + tv_w)


def data():
    g = torch.Generator().manual_seed(1)
    blocks = torch.rand(16, 1, 4, 4, generator=g)
    clean = F.interpolate(blocks, scale_factor=4, mode="nearest")
    return clean + 0.2 * torch.randn(clean.shape, generator=g), clean


def make():
    torch.manual_seed(0)
    return nn.Sequential(nn.Conv2d(1, 8, 3, padding=1), nn.Tanh(), nn.Conv2d(8, 1, 3, padding=1))


def term_grads(model, noisy, clean, tv):
    """Gradient norms over all parameters of the data term and of the TV term, separately."""
    out = model(noisy)
    params = list(model.parameters())
    data_g = torch.autograd.grad(F.mse_loss(out, clean), params, retain_graph=True)
    tv_g = torch.autograd.grad(tv(out), params)
    norm = lambda gs: torch.sqrt(sum((g**2).sum() for g in gs)).item()
    return norm(data_g), norm(tv_g), F.mse_loss(out, clean).item(), tv(out).item()


def step(watch, tv=lambda img: tv_sum(img, WEIGHT)):
    model = make()
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
    noisy, clean = data()
    parts = term_grads(model, noisy, clean, tv)
    for _ in range(STEPS):
        optimizer.zero_grad()
        out = model(noisy)
        (F.mse_loss(out, clean) + tv(out)).backward()
        optimizer.step()
    with watch(model) as w:
        optimizer.zero_grad()
        out = model(noisy)
        loss = F.mse_loss(out, clean) + tv(out)
        loss.backward()
        grads = [p.grad.detach().clone() for p in model.parameters()]
        optimizer.step()
    return Run(w=w, model=model, parts=parts, grads=grads,
               noisy_mse=F.mse_loss(noisy, clean).item(), data_loss=F.mse_loss(out, clean).item(),
               out_tv=tv_sum(out, 1.0).item(), clean_tv=tv_sum(clean, 1.0).item())  # fmt: skip


def truth(run):
    data_norm, tv_norm, data_loss, tv_loss = run.parts
    assert tv_loss > 1.5 * data_loss and tv_norm > 1.5 * data_norm  # outweighs it from the start
    assert run.out_tv < 0.01 * run.clean_tv  # the outputs flattened
    assert run.data_loss > run.noisy_mse  # worse than returning the noisy input
    for g in run.grads:
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0)
