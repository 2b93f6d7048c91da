"""A sparse autoencoder (8-dimensional activations, 32 ReLU latents) trained with a strong L1
penalty on the latent activations (coefficient 1.0) and no constraint on the decoder's column norms.
After 200 Adam steps 20 of the 32 latents never fire on any of the 256 inputs: their ReLU
pre-activations are negative everywhere, so in the watched step their encoder rows, encoder biases
and decoder columns get exactly zero gradient and can never come back. The loss is finite; nothing
raises.

Source: https://arxiv.org/html/2605.05341 ("Feature Starvation as Geometric Instability in Sparse
Autoencoders": "standard ℓ1-regularized SAEs suffer from feature starvation (dead neurons) and
shrinkage bias, often requiring computationally expensive heuristic resampling"). Adapted: inputs
are sparse combinations of 16 random unit directions in 8 dimensions, ``relu(enc(x - b_dec))``, 200
unwatched Adam steps at 1e-2 on batches of 64, then one watched step.
"""

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://arxiv.org/html/2605.05341"
DESCRIPTION = "SAE with L1 coefficient 1.0, no decoder norm: 20 of 32 ReLU latents dead"
ASK = ["enc.weight"]
MUST = [
    [
        r"dead",
        r"(never|not) (fire|activ)\w*",
        r"inactive",
        r"(zero|no) (activation|output)s?",
        r"relu[^\n]{0,40}(zero|negative|off)",
    ],
]
MUST_NOT = [FALSE_OK, CLAIMS_NONFINITE, r"not in (the |any )?optimizer", r"no_grad"]
L1 = 1.0


def data():
    g = torch.Generator().manual_seed(1)
    feats = F.normalize(torch.randn(16, 8, generator=g), dim=1)
    mask = (torch.rand(256, 16, generator=g) < 0.15).float()
    return (mask * torch.rand(256, 16, generator=g) * 2) @ feats


class SAE(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.Linear(8, 32)
        self.dec = nn.Linear(32, 8)

    def forward(self, x):
        z = F.relu(self.enc(x - self.dec.bias))
        return self.dec(z), z


def sae_loss(model, xb):
    x_hat, z = model(xb)
    return F.mse_loss(x_hat, xb) + L1 * z.abs().sum(1).mean(), z


def step(watch):
    torch.manual_seed(0)
    model = SAE()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    x = data()
    for i in range(200):
        optimizer.zero_grad()
        sae_loss(model, x[(i * 64) % 256 :][:64])[0].backward()
        optimizer.step()
    with torch.no_grad():
        fires = (model(x)[1] > 0).sum(0)  # before the watched step
    with watch(model) as w:
        optimizer.zero_grad()
        loss, z = sae_loss(model, x[:64])
        loss.backward()
        grads = {n: p.grad.detach().clone() for n, p in model.named_parameters()}
        optimizer.step()
    return Run(w=w, loss=loss.item(), grads=grads, fires=fires, z=z.detach())


def truth(run):
    assert torch.isfinite(torch.tensor(run.loss))
    dead = run.fires == 0  # never fires on any of the 256 inputs
    assert int(dead.sum()) >= 16
    assert bool((run.z[:, dead] == 0).all())
    assert bool((run.grads["enc.weight"][dead] == 0).all())
    assert bool((run.grads["enc.bias"][dead] == 0).all())
    assert bool((run.grads["dec.weight"][:, dead] == 0).all())
