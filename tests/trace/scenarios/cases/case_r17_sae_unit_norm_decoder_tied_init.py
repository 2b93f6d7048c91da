"""Control: a sparse autoencoder (8-dimensional activations, 32 ReLU latents) trained the usual way:
decoder columns kept at unit norm (renormalised after every step), the encoder initialised as the
decoder's transpose, a moderate L1 coefficient (0.05). After 50 Adam steps every latent still fires
on several of the 64 inputs of the watched batch; every parameter gets a finite gradient and no
latent's encoder row or decoder column has an all-zero gradient.

Source: https://arxiv.org/html/2603.04198 ("Stable and Steerable Sparse Autoencoders with Weight
Regularization": "when combined with tied initialization and unit-norm decoder constraints, it
dramatically increases cross-seed feature consistency"). Adapted: inputs are sparse combinations of
16 random unit directions in 8 dimensions, ``relu(enc(x - b_dec))``, 50 unwatched Adam steps at 1e-3
on batches of 64, then one watched step.
"""

import torch
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://arxiv.org/html/2603.04198"
DESCRIPTION = "control: SAE, unit-norm decoder columns, tied init, L1 0.05: every latent fires"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    r"dead",
    r"(never|not) (fire|activ)\w*",
    r"all-zero",
]
L1 = 0.05


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
        with torch.no_grad():
            self.dec.weight.copy_(F.normalize(self.dec.weight, dim=0))
            self.enc.weight.copy_(self.dec.weight.t())
            self.enc.bias.zero_()

    def forward(self, x):
        z = F.relu(self.enc(x - self.dec.bias))
        return self.dec(z), z


def sae_loss(model, xb):
    x_hat, z = model(xb)
    return F.mse_loss(x_hat, xb) + L1 * z.abs().sum(1).mean(), z


def train_step(model, optimizer, xb):
    optimizer.zero_grad()
    loss, z = sae_loss(model, xb)
    loss.backward()
    grads = {n: p.grad.detach().clone() for n, p in model.named_parameters()}
    optimizer.step()
    with torch.no_grad():
        model.dec.weight.copy_(F.normalize(model.dec.weight, dim=0))  # unit-norm columns
    return loss, z, grads


def step(watch):
    torch.manual_seed(0)
    model = SAE()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    x = data()
    for i in range(50):
        train_step(model, optimizer, x[(i * 64) % 256 :][:64])
    with watch(model) as w:
        loss, z, grads = train_step(model, optimizer, x[:64])
    with torch.no_grad():
        fires = (model(x)[1] > 0).sum(0)
    return Run(w=w, loss=loss.item(), grads=grads, fires=fires, z=z.detach())


def truth(run):
    assert torch.isfinite(torch.tensor(run.loss))
    assert bool(((run.z > 0).sum(0) > 0).all())  # every latent fires in the watched batch
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()), n
    assert bool((run.grads["enc.weight"].abs().sum(1) > 0).all())
    assert bool((run.grads["dec.weight"].abs().sum(0) > 0).all())
