"""A healthy fine-tuning step that looks broken: mixout at rate 0.9 on the middle layer of a
pretrained network.  Each step draws a mask ``M`` (1 with probability 0.9) and the layer computes
with ``(M * u + (1 - M) * w - 0.9 * u) / 0.1``, ``u`` the pretrained weight and ``w`` the one being
fine-tuned: the entries swapped for their pretrained values (about 90%) get an exactly-zero
gradient in that step, by design, and the others a gradient scaled by 10.  At the first step ``w``
equals ``u`` and the layer computes with the pretrained weight exactly.  Every other parameter's
gradient is finite and nonzero.

Source: https://www.newx.sg/paper/detail/f3feb9a2-f823-11f0-b84c-00163e10baa7 ("Mixout mitigates
overfitting by probabilistically swapping a subset of fine-tuned weights with their pre-trained
counterparts during training"; "Our study reveals that achieving strong performance with Mixout on
domain generalization benchmarks requires a notably high masking probability of 0.9 for ViTs";
"High-Ratio Mixout: a fine-tuning strategy that replaces up to 90% of learnable parameters with
their corresponding pretrained weights").  Adapted: the mixout formula of Lee et al. (the stored
page gives none) on the ``Linear(64, 64)`` of a ``Linear(16, 64), Tanh, Linear(64, 64), Tanh,
Linear(64, 4)`` network whose weights are the "pretrained" ones (seed 0), 128 examples, Adam at
1e-4.
"""

import torch
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://www.newx.sg/paper/detail/f3feb9a2-f823-11f0-b84c-00163e10baa7"
DESCRIPTION = "healthy: mixout p = 0.9: ~90% of the middle weight's entries get zero grad by design"
ASK = []
MUST = [[HEALTHY_OK, r"mixout", r"\bmask\w*", r"pre-?trained"]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    r"\bdead\b",
    r"requires_grad\s*(=|is|was)?\s*False",
    r"not in (the |any )?optimi[sz]er",
]
P = 0.9


class MixoutLinear(nn.Module):
    def __init__(self, linear, p, generator):
        super().__init__()
        self.weight = nn.Parameter(linear.weight.detach().clone())
        self.bias = nn.Parameter(linear.bias.detach().clone())
        self.register_buffer("pretrained", linear.weight.detach().clone())
        self.p, self.generator, self.last_mask = p, generator, None

    def forward(self, x):
        mask = (torch.rand(self.weight.shape, generator=self.generator) < self.p).float()
        self.last_mask = mask
        u = self.pretrained
        mixed = (mask * u + (1 - mask) * self.weight - self.p * u) / (1 - self.p)
        return F.linear(x, mixed, self.bias)


def data():
    g = torch.Generator().manual_seed(1)
    x = torch.randn(128, 16, generator=g)
    return x, (x[:, :4] * x[:, 4:8]).argmax(1)


def step(watch):
    torch.manual_seed(0)
    pretrained = nn.Sequential(
        nn.Linear(16, 64), nn.Tanh(), nn.Linear(64, 64), nn.Tanh(), nn.Linear(64, 4)
    )
    with torch.no_grad():
        x, y = data()
        reference = pretrained(x)
    masks = torch.Generator().manual_seed(3)
    model = pretrained
    model[2] = MixoutLinear(pretrained[2], P, masks)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-4)
    with watch(model) as w:
        optimizer.zero_grad()
        logits = model(x)
        F.cross_entropy(logits, y).backward()
        grads = {n: p.grad.detach().clone() for n, p in model.named_parameters()}
        optimizer.step()
    mask = model[2].last_mask
    return Run(w=w, grads=grads, mask=mask, logits=logits.detach(), reference=reference)


def truth(run):
    assert torch.allclose(run.logits, run.reference, atol=1e-5)  # w == u: the pretrained output
    assert 0.87 < float(run.mask.mean()) < 0.93
    g = run.grads["2.weight"]
    assert bool((g[run.mask == 1] == 0).all()) and bool((g[run.mask == 0] != 0).all())
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
