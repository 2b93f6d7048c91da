"""A VAE whose latent code is drawn with ``Normal(mu, std).sample()``: the sample is a constant
to autograd, so the reconstruction loss sends no gradient back into the encoder.  The encoder
still gets a finite, nonzero gradient -- from the KL term alone -- and the decoder trains: the
step looks healthy while the encoder never learns to encode.

Source: https://www.onenoughtone.com/learn/ml-generative-models-variational-autoencoders/4
("We can't take gradients through randomness"; "The RHS is zero because once we sample z, it's
just a constant -- the gradient of a constant with respect to phi is zero"; the fix is the
reparameterization trick, ``rsample``).
"""

import torch
from scenario_kit import FALSE_OK, Run
from torch import nn
from torch.distributions import Normal
from torch.nn import functional as F

SOURCE = "https://www.onenoughtone.com/learn/ml-generative-models-variational-autoencoders/4"
DESCRIPTION = "VAE z = Normal(mu, std).sample(): reconstruction never reaches the encoder"
ASK = ["enc.0.weight"]
MUST = [
    [
        r"\bsample\(\)",
        r"\.sample\b",
        r"rsample",
        r"\bNormal\b",
        r"sampl\w*[^\n]{0,40}(no grad|not differentiable|constant|cut|detach|graph)",
        r"reparameteri",
        r"\bz\b[^\n]{0,60}(constant|no grad|not require|detach|graph)",
        r"(reconstruction|decoder)[^\n]{0,80}(not|never)[^\n]{0,20}reach[^\n]{0,30}encoder",
        r"encoder[^\n]{0,80}only[^\n]{0,30}(KL|kl_|kl\b)",
    ]
]
MUST_NOT = [FALSE_OK]


class VAE(nn.Module):
    def __init__(self, rsample=False):
        super().__init__()
        self.enc = nn.Sequential(nn.Linear(8, 16), nn.ReLU())
        self.mu = nn.Linear(16, 2)
        self.logvar = nn.Linear(16, 2)
        self.dec = nn.Sequential(nn.Linear(2, 16), nn.ReLU(), nn.Linear(16, 8))
        self.rsample = rsample

    def forward(self, x):
        h = self.enc(x)
        mu, logvar = self.mu(h), self.logvar(h)
        q = Normal(mu, torch.exp(0.5 * logvar))
        z = q.rsample() if self.rsample else q.sample()
        return self.dec(z), mu, logvar, z


def kl_term(mu, logvar):
    return -0.5 * torch.mean(torch.sum(1 + logvar - mu.pow(2) - logvar.exp(), dim=1))


def step(watch, rsample=False):
    import copy

    torch.manual_seed(0)
    model = VAE(rsample)
    ref = copy.deepcopy(model)  # the encoder before the step
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    x = torch.rand(32, 8, generator=torch.Generator().manual_seed(1))
    torch.manual_seed(2)  # the noise of the sample
    with watch(model) as w:
        opt.zero_grad()
        recon, mu, logvar, z = model(x)
        loss = F.mse_loss(recon, x) + kl_term(mu, logvar)
        loss.backward()
        grad = model.enc[0].weight.grad.clone()
        opt.step()
    # the KL term alone, at the same (pre-step) encoder: what the encoder got if recon sent none
    h = ref.enc(x)
    kl_only = torch.autograd.grad(kl_term(ref.mu(h), ref.logvar(h)), ref.enc[0].weight)[0]
    return Run(w=w, model=model, z=z, grad=grad, kl_only=kl_only)


def truth(run):
    assert not run.z.requires_grad  # sample(): z is a constant
    assert bool(torch.isfinite(run.grad).all()) and bool(run.grad.abs().sum() > 0)
    assert torch.allclose(run.grad, run.kl_only)  # nothing from the reconstruction
    assert run.model.dec[0].weight.grad is not None
