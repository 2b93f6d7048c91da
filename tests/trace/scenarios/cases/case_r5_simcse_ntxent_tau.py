"""Control: an unsupervised SimCSE step -- the same batch encoded twice (dropout as the only
augmentation), embeddings normalised, cosine similarities divided by the temperature 0.05, cross
entropy against the diagonal.  The user wondered why the negatives' similarity goes to 0 rather
than -1; the step itself is healthy: every parameter gets a finite, nonzero gradient.

Source: https://discuss.pytorch.org/t/contrastive-learning/175636 ("during my training process
using this loss, I noticed that the similarity terms in the denominator converge to 0 instead of
-1"; "Mine is SimCSE and tau is a hyperparameter(=0.05)").
"""

import torch
from scenario_kit import CLAIMS_NO_ZERO_GRAD, CLAIMS_NONFINITE, HEALTHY_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://discuss.pytorch.org/t/contrastive-learning/175636"
DESCRIPTION = "control: SimCSE NT-Xent (two dropout views, normalize, tau 0.05): healthy"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_NO_ZERO_GRAD,
    r"no gradient",
    r"\bdead\b",
    r"explod",
    r"same graph",
]

TAU = 0.05


def step(watch):
    torch.manual_seed(0)
    encoder = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Dropout(0.1), nn.Linear(32, 16))
    opt = torch.optim.AdamW(encoder.parameters(), lr=1e-3)
    x = torch.randn(12, 16, generator=torch.Generator().manual_seed(1))
    torch.manual_seed(2)  # the dropout masks
    with watch(encoder) as w:
        opt.zero_grad()
        z1, z2 = F.normalize(encoder(x), dim=1), F.normalize(encoder(x), dim=1)
        sim = z1 @ z2.T / TAU
        loss = F.cross_entropy(sim, torch.arange(12))
        loss.backward()
        opt.step()
    return Run(w=w, encoder=encoder, loss=loss.detach(), sim=sim.detach())


def truth(run):
    assert bool(torch.isfinite(run.loss)) and bool(run.sim.abs().max() <= 1 / TAU + 1e-3)
    assert run.encoder.training
    for p in run.encoder.parameters():
        assert p.grad is not None and bool(torch.isfinite(p.grad).all())
        assert bool(p.grad.abs().sum() > 0)
