"""A healthy step its reader suspected: a representation generator trained on features from a
frozen pretrained encoder followed by a newly added, randomly initialised projector MLP that is
also frozen (``requires_grad=False``).  The encoder and the projector run under
``torch.no_grad()``, get no gradient and are not in the optimizer -- as the code intends, the
random projection being fixed -- while the generator (a small denoiser trained to predict the
noise added to the projected representation) gets a finite, nonzero gradient everywhere and moves.
Nothing is wrong.

Source: https://gitmemories.com/LTH14/rcg/issues/23 ("why the projector head MLP set to
requires_grad=False"; "a new projector head MLP is added after loading the pre-trained MoCo v3
model. However, the parameters of this newly added component are also set to
requires_grad=False"; "since this MLP head is randomly initialized, why does it not require any
training before being used for feature projection?").  Adapted: an ``encoder`` (``Linear(32,
64)``, ``Tanh``, ``Linear(64, 32)``, seeded, standing for the pretrained MoCo v3), a ``projector``
(``Linear(32, 32)``, ``Tanh``, ``Linear(32, 16)``), both frozen; the ``generator`` an MLP on the
noisy representation and the noise level (``Linear(17, 64)``, ``Tanh``, ``Linear(64, 16)``), MSE
on the noise, AdamW at 1e-3.
"""

import torch
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://gitmemories.com/LTH14/rcg/issues/23"
DESCRIPTION = "healthy: frozen encoder + frozen random projector, generator trained on their output"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [CLAIMS_NONFINITE, CLAIMS_ERROR, r"\bdead\b", r"all[- ]zero", r"vanish\w*"]


class RepGen(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(32, 64), nn.Tanh(), nn.Linear(64, 32))
        self.projector = nn.Sequential(nn.Linear(32, 32), nn.Tanh(), nn.Linear(32, 16))
        self.generator = nn.Sequential(nn.Linear(17, 64), nn.Tanh(), nn.Linear(64, 16))
        for p in (*self.encoder.parameters(), *self.projector.parameters()):
            p.requires_grad = False

    def forward(self, images, noise, level):
        with torch.no_grad():
            rep = F.normalize(self.projector(self.encoder(images)), dim=-1)
        noisy = rep + level * noise
        return self.generator(torch.cat([noisy, level], dim=1))


def step(watch):
    torch.manual_seed(0)
    model = RepGen()
    before = {n: p.detach().clone() for n, p in model.named_parameters()}
    optimizer = torch.optim.AdamW(model.generator.parameters(), lr=1e-3)
    g = torch.Generator().manual_seed(1)
    images = torch.randn(64, 32, generator=g)
    noise = torch.randn(64, 16, generator=g)
    level = torch.rand(64, 1, generator=g)
    with watch(model) as w:
        optimizer.zero_grad()
        loss = F.mse_loss(model(images, noise, level), noise)
        loss.backward()
        optimizer.step()
    return Run(w=w, model=model, before=before, optimizer=optimizer)


def truth(run):
    held = {id(p) for group in run.optimizer.param_groups for p in group["params"]}
    for n, p in run.model.named_parameters():
        if n.startswith(("encoder.", "projector.")):
            assert not p.requires_grad and p.grad is None and id(p) not in held, n
            assert torch.equal(p.detach(), run.before[n]), n
        else:
            assert bool(torch.isfinite(p.grad).all()) and bool(p.grad.abs().sum() > 0), n
            assert id(p) in held and not torch.equal(p.detach(), run.before[n]), n
