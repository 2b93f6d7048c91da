"""Control: one DDPM training step as the course writes it: sample clean data, a timestep t
uniformly, Gaussian noise eps; form ``x_t = sqrt(abar_t) x0 + sqrt(1 - abar_t) eps``; the network
(an MLP with a learned timestep embedding) predicts the noise; the loss is ``MSE(eps_theta, eps)``.
The noise target is a fixed sample and the step is healthy (the embedding rows of timesteps not
drawn in the batch get zero rows of gradient, as any embedding).

Source: https://apxml.com/courses/intro-diffusion-models/chapter-4-model-architecture-training/training-algorithm
("Sample a timestep", "Sample noise", "Compute the noisy sample", "Predict noise using the
network", "Calculate the loss").
"""

import torch
from scenario_kit import CLAIMS_NONFINITE, HEALTHY_OK, Run
from torch import nn

SOURCE = "https://apxml.com/courses/intro-diffusion-models/chapter-4-model-architecture-training/training-algorithm"
DESCRIPTION = "control: DDPM step, x_t from x0 and eps, MLP + timestep embedding predicts eps"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [CLAIMS_NONFINITE, r"all-zero", r"target[^\n]{0,60}(carries|sends|sent) gradient"]

T = 100


class Denoiser(nn.Module):
    def __init__(self):
        super().__init__()
        self.time = nn.Embedding(T, 32)
        self.inp = nn.Linear(2, 32)
        self.net = nn.Sequential(nn.SiLU(), nn.Linear(32, 32), nn.SiLU(), nn.Linear(32, 2))

    def forward(self, x, t):
        return self.net(self.inp(x) + self.time(t))


def step(watch):
    torch.manual_seed(0)
    model = Denoiser()
    betas = torch.linspace(1e-4, 0.02, T)
    abar = torch.cumprod(1 - betas, 0)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    g = torch.Generator().manual_seed(1)
    x0 = torch.randn(64, 2, generator=g) * 0.5 + torch.tensor([1.0, -1.0])
    with watch(model) as w:
        t = torch.randint(0, T, (64,), generator=g)
        eps = torch.randn(64, 2, generator=g)
        a = abar[t].unsqueeze(1)
        xt = a.sqrt() * x0 + (1 - a).sqrt() * eps
        loss = nn.functional.mse_loss(model(xt, t), eps)
        optimizer.zero_grad()
        loss.backward()
        grads = {n: p.grad.clone() for n, p in model.named_parameters()}
        optimizer.step()
    return Run(w=w, grads=grads, loss=loss.item())


def truth(run):
    assert 0 < run.loss < 10
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
