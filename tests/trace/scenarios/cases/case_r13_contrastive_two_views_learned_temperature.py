"""Control: the same encoder trained contrastively on two noisy views of each example: row i of
``z1 @ z2.T * scale`` has its positive at column i, the other view of the same example, and the
symmetric cross entropy pulls the two views together while pushing other examples apart.  The
temperature is learned CLIP-style as ``logit_scale`` (a parameter holding ``log(1 / 0.1)``,
exponentiated and clamped at 100, not reached here); it gets a finite gradient like every encoder
weight.  The positives are not constant; a healthy step.

Source: https://ruabraun.github.io/jekyll/update/2021/04/30/Why-The-Temperature-Matters-For-Contrastive-Loss.html
("the numerator contains the comparison between the positive pair x_a and x_p, and the
denominator has all the comparisons"; "Now set the tau=0.1").  Adapted: the temperature is a
learned parameter starting at 0.1.
"""

import math

import torch
from case_r13_contrastive_positive_is_anchor import data, make_encoder
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = (
    "https://ruabraun.github.io/jekyll/update/2021/04/30/"
    "Why-The-Temperature-Matters-For-Contrastive-Loss.html"
)
DESCRIPTION = "control: two views, positives off the anchor, learned logit_scale: healthy"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    r"diagonal",
    r"explod\w*",
    r"all-zero",
    r"no gradient",
    r"dead (units?|relu|neurons?)",
]


class Contrastive(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = make_encoder()
        self.logit_scale = nn.Parameter(torch.tensor(math.log(1 / 0.1)))

    def forward(self, x1, x2):
        z1 = F.normalize(self.encoder(x1), dim=1)
        z2 = F.normalize(self.encoder(x2), dim=1)
        return self.logit_scale.exp().clamp(max=100) * z1 @ z2.T


def step(watch):
    torch.manual_seed(0)
    model = Contrastive()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    _, (x1, x2) = data()
    labels = torch.arange(16)
    with watch(model) as w:
        opt.zero_grad()
        logits = model(x1, x2)
        loss = (F.cross_entropy(logits, labels) + F.cross_entropy(logits.T, labels)) / 2
        loss.backward()
        opt.step()
    grads = {n: p.grad.detach().clone() for n, p in model.named_parameters()}
    return Run(w=w, logits=logits.detach(), grads=grads, loss=loss.item())


def truth(run):
    diag = run.logits.diagonal()
    assert diag.std() > 0.01  # the positives are not a constant
    assert run.logits.abs().max() < 100
    for n, gr in run.grads.items():
        assert bool(torch.isfinite(gr).all()) and bool(gr.abs().sum() > 0), n
