"""A CLIP-style contrastive step whose learned temperature is kept in range by clamping inside the
forward, ``self.logit_scale.clamp(max=log(100)).exp()``, with ``logit_scale`` already past the
bound (4.8 > log 100 = 4.605, as a resumed run whose Adam momentum carried it over).  ``clamp``
passes no gradient where its input is beyond the bound: ``logit_scale.grad`` is exactly 0 at this
step and at every later one, Adam leaves it where it is, and the temperature is frozen at 1/100
for good although the loss's derivative with respect to the scale is not 0.  The two encoders get
finite, nonzero gradients; nothing raises.

Source: https://vishalkumarr2.github.io/Learning_from_building_systems/llm-to-vla/weeks/week-09/day-60-clip-internals-siglip.html
("The temperature τ in CLIP's contrastive loss is learned (initialized to 0.07)"; "In practice,
CLIP parameterizes it as τ = exp(log τ) where log τ is learnable, clamped to [-log 100, log
100]").  Adapted: the page does not say where the clamp goes; here it is in the forward.  Two
linear encoders (``Linear(32, 16)`` for images, ``Linear(24, 16)`` for texts), L2-normalised
embeddings, the symmetric cross-entropy over a batch of 16 matched pairs, Adam at 1e-3.
"""

import math

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = (
    "https://vishalkumarr2.github.io/Learning_from_building_systems/llm-to-vla/weeks/week-09/"
    "day-60-clip-internals-siglip.html"
)
DESCRIPTION = "CLIP logit_scale clamped in the forward, already past log(100): its grad is 0"
ASK = ["logit_scale"]
MUST = [
    [
        r"clamp\w*",
        r"(above|beyond|past|exceeds?|over|outside) (the |its )?(bound|max\w*|limit|range|upper)",
        r"saturat\w*",
    ],
    [
        r"all[- ]zero",
        r"\bzero grad\w*",
        r"gradients? (is |are |was |were )?(exactly )?(all )?(0|zero)",
        r"no gradient",
        r"(did not|didn't|never|cannot|can't) (move|change)",
    ],
]
MUST_NOT = [
    FALSE_OK,
    CLAIMS_NONFINITE,
    r"requires_grad\s*(=|is|was)?\s*False",
    r"not in (the |any )?optimi[sz]er",
]
MAX_SCALE = math.log(100)
RESUMED_SCALE = 4.8


class Clip(nn.Module):
    def __init__(self, clamp_in_forward):
        super().__init__()
        self.image_proj = nn.Linear(32, 16)
        self.text_proj = nn.Linear(24, 16)
        self.logit_scale = nn.Parameter(torch.tensor(math.log(1 / 0.07)))
        self.clamp_in_forward = clamp_in_forward

    def forward(self, images, texts):
        zi = F.normalize(self.image_proj(images), dim=-1)
        zt = F.normalize(self.text_proj(texts), dim=-1)
        scale = self.logit_scale
        if self.clamp_in_forward:
            scale = scale.clamp(max=MAX_SCALE)
        return scale.exp() * zi @ zt.T


def clip_loss(logits):
    labels = torch.arange(len(logits))
    return (F.cross_entropy(logits, labels) + F.cross_entropy(logits.T, labels)) / 2


def data():
    g = torch.Generator().manual_seed(1)
    images = torch.randn(16, 32, generator=g)
    texts = images[:, :24] + 0.5 * torch.randn(16, 24, generator=g)  # matched pairs
    return images, texts


def step(watch, clamp_in_forward=True):
    torch.manual_seed(0)
    model = Clip(clamp_in_forward)
    with torch.no_grad():
        model.logit_scale.fill_(RESUMED_SCALE)
    start = {n: p.detach().clone() for n, p in model.named_parameters()}
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    images, texts = data()
    with watch(model) as w:
        optimizer.zero_grad()
        loss = clip_loss(model(images, texts))
        loss.backward()
        grads = {n: p.grad.detach().clone() for n, p in model.named_parameters()}
        optimizer.step()
        if not clamp_in_forward:
            with torch.no_grad():  # OpenCLIP: clamp the parameter itself after the step
                model.logit_scale.clamp_(0, MAX_SCALE)
    return Run(w=w, model=model, start=start, grads=grads, images=images, texts=texts)


def unclamped_scale_grad(run):
    """d loss / d logit_scale at the start weights, with the scale used as it is."""
    ref = Clip(clamp_in_forward=False)
    ref.load_state_dict(run.start)
    return torch.autograd.grad(clip_loss(ref(run.images, run.texts)), ref.logit_scale)[0]


def truth(run):
    assert run.model.clamp_in_forward and float(run.start["logit_scale"]) > MAX_SCALE
    assert float(run.grads["logit_scale"]) == 0.0  # clamp passes nothing beyond its bound
    assert abs(float(unclamped_scale_grad(run))) > 1e-3  # the loss does depend on the scale
    # frozen above the bound
    assert float(run.model.logit_scale.detach()) == float(run.start["logit_scale"])
    for n in ("image_proj.weight", "image_proj.bias", "text_proj.weight", "text_proj.bias"):
        g = run.grads[n]
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
