"""A ControlNet whose "trainable copy" of the frozen model's encoder is the encoder itself:
``self.control = base.encoder`` instead of ``copy.deepcopy(base.encoder)``.  The base model is then
locked (``model.base.requires_grad_(False)``), as ControlNet prescribes, and that freezes the branch
too: it is the same module, its parameters are the base's, ``requires_grad=False``.  The optimizer
is built over the ControlNet's parameters (the branch and the two zero convolutions), so it holds the
frozen encoder's parameters, which never get a gradient (``.grad`` None on both watched steps) and
never move; only the zero convolutions train (the output ones from the first step, the input one from
the second).  The condition can only reach the output through the frozen encoder and two 1x1 convs.
Nothing raises; every gradient present is finite.

Source: https://researchpapers.dev/en/papers/controlnet-conditional-control/ ("It freezes the
original Stable Diffusion weights, clones the encoder into a trainable copy, and connects the two
with "zero convolutions": convolution layers whose weights start at exactly zero"; "ControlNet's core
move is to never touch the original weights. It keeps the production-ready Stable Diffusion model
frozen and makes a trainable copy of its encoder blocks").  Adapted: a small convolutional
noise-prediction network (an encoder ``Conv(3, 8)``, ``Conv(8, 16, stride 2)`` with SiLU and a
decoder with a skip connection) stands for the pretrained U-Net; ControlNet's two zero convolutions
(``Z(c)`` into the branch's input, ``Z`` on each of the branch's two feature maps, added to the base's
skip and bottleneck features); 8x8 images, an edge-map condition, MSE on the noise, AdamW at 1e-3,
two watched steps.
"""

import copy
import math

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://researchpapers.dev/en/papers/controlnet-conditional-control/"
DESCRIPTION = "ControlNet branch = base.encoder (no deepcopy): frozen with the base, never trains"
ASK = []
MUST = [
    [
        r"same (module|object|encoder|parameters?|tensors?)",
        r"alias\w*",
        r"deepcopy|deep copy",
        r"not a copy|no copy|instead of a copy",
        r"shar\w* (the |its )?(parameters?|weights?|module|encoder)",
        r"base\.encoder",
    ],
    [r"requires_grad", r"frozen|freez\w*", r"\bNone\b", r"no grad\w*|never (get|got|receiv)\w*"],
]
MUST_NOT = [FALSE_OK, CLAIMS_NONFINITE, r"\bdead\b"]


class Encoder(nn.Sequential):
    def __init__(self):
        super().__init__(nn.Conv2d(3, 8, 3, padding=1), nn.SiLU(), nn.Conv2d(8, 16, 3, 2, 1))

    def forward(self, x):
        e1 = self[1](self[0](x))
        return e1, F.silu(self[2](e1))


class Base(nn.Module):  # stands for the pretrained U-Net
    def __init__(self):
        super().__init__()
        self.encoder = Encoder()
        self.up = nn.ConvTranspose2d(16, 8, 2, stride=2)
        self.decoder = nn.Sequential(nn.Conv2d(16, 8, 3, padding=1), nn.SiLU(), nn.Conv2d(8, 3, 1))

    def forward(self, x, extra=(0, 0)):
        e1, e2 = self.encoder(x)
        e1, e2 = e1 + extra[0], e2 + extra[1]
        return self.decoder(torch.cat([F.silu(self.up(e2)), e1], 1))


def zero_conv(cin, cout):
    conv = nn.Conv2d(cin, cout, 1)
    nn.init.zeros_(conv.weight)
    nn.init.zeros_(conv.bias)
    return conv


class ControlNet(nn.Module):
    def __init__(self, base, copied):
        super().__init__()
        self.base = base
        self.control = copy.deepcopy(base.encoder) if copied else base.encoder
        self.zero_in = zero_conv(1, 3)
        self.zero_out = nn.ModuleList([zero_conv(8, 8), zero_conv(16, 16)])

    def forward(self, x, hint):
        c1, c2 = self.control(x + self.zero_in(hint))
        return self.base(x, (self.zero_out[0](c1), self.zero_out[1](c2)))


def data():
    g = torch.Generator().manual_seed(1)
    x = torch.randn(8, 3, 8, 8, generator=g)
    hint = (torch.rand(8, 1, 8, 8, generator=g) > 0.7).float()
    return x, hint, torch.randn(8, 3, 8, 8, generator=g)


def step(watch, copied=False):
    torch.manual_seed(0)
    model = ControlNet(Base(), copied)
    model.base.requires_grad_(False)  # the pretrained model is locked
    optimizer = torch.optim.AdamW(
        [*model.control.parameters(), *model.zero_in.parameters(), *model.zero_out.parameters()],
        lr=1e-3,
    )
    before = {n: p.detach().clone() for n, p in model.named_parameters()}
    x, hint, noise = data()
    grads, losses = [], []
    with watch(model) as w:
        for _ in range(2):
            optimizer.zero_grad()
            loss = F.mse_loss(model(x, hint), noise)
            loss.backward()
            losses.append(float(loss.detach()))
            grads.append({n: p.grad for n, p in model.named_parameters()})
            grads[-1] = {n: None if g is None else g.detach().clone() for n, g in grads[-1].items()}
            optimizer.step()
    moved = {n for n, p in model.named_parameters() if not torch.equal(p.detach(), before[n])}
    return Run(w=w, model=model, grads=grads, losses=losses, moved=moved)


def _nonzero(g):
    return g is not None and bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0)


def truth(run):
    model = run.model
    assert model.control is model.base.encoder
    assert all(math.isfinite(v) for v in run.losses)
    first, second = run.grads
    for n, p in model.named_parameters():  # the branch's parameters are named base.encoder.*
        if n.startswith("base."):
            assert not p.requires_grad and first[n] is None and second[n] is None, n
            assert n not in run.moved, n
    for n in ("zero_out.0.weight", "zero_out.1.weight"):
        assert _nonzero(first[n]) and _nonzero(second[n]), n
    assert bool(first["zero_in.weight"].abs().sum() == 0) and _nonzero(second["zero_in.weight"])
