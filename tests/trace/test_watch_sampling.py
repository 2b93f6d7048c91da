"""Class: a random sample drawn from values that require grad (``torch.normal(mu, std)``,
``torch.bernoulli(p)``) on the way to the loss.  torch gives such a sample a zero derivative
with respect to its parameters, so the encoder gets nothing through it, while every gradient
can be finite and nonzero (a KL term).  Named exactly when the sample's parameters carry
gradient; the reparameterised sample (``rsample``, ``mu + std * randn``), a sample of
detached parameters and ``Distribution.sample()`` are never named.

The truth is torch's own: the gradient of the reconstruction term alone with respect to the
encoder's parameters (``torch.autograd.grad``) is zero (or absent) exactly when the sample cut
it, and nonzero when the path is kept.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn

import gradarg


class VAE(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc, self.mu, self.logvar = nn.Linear(6, 8), nn.Linear(8, 3), nn.Linear(8, 3)
        self.dec = nn.Linear(3, 6)

    def encode(self, x):
        h = torch.tanh(self.enc(x))
        return self.mu(h), self.logvar(h)


SAMPLES = {
    "torch.normal(mu, std)": lambda mu, std: torch.normal(mu, std),
    "torch.normal(mu, 1.0)": lambda mu, std: torch.normal(mu, 1.0),
    "torch.bernoulli(sigmoid(mu))": lambda mu, std: torch.bernoulli(torch.sigmoid(mu)),
    "Normal.rsample()": lambda mu, std: torch.distributions.Normal(mu, std).rsample(),
    "mu + std * randn": lambda mu, std: mu + std * torch.randn_like(std),
    "Normal.sample()": lambda mu, std: torch.distributions.Normal(mu, std).sample(),
    "torch.normal(detached)": lambda mu, std: torch.normal(mu.detach(), std.detach()),
}


@settings(max_examples=30, deadline=None)
@given(how=st.sampled_from(sorted(SAMPLES)), kl=st.booleans(), n=st.integers(1, 6),
       seed=st.integers(0, 999))
def test_a_sample_that_cuts_the_gradient_is_named_exactly(how, kl, n, seed):
    torch.manual_seed(seed)
    model = VAE()
    x = torch.randn(n, 6)
    encoder = [*model.enc.parameters(), *model.mu.parameters()]
    with gradarg.watch(model) as w:
        mu, logvar = model.encode(x)
        std = torch.exp(0.5 * logvar)
        z = SAMPLES[how](mu, std)
        recon = F.mse_loss(model.dec(z), x)
        through = torch.autograd.grad(recon, encoder, retain_graph=True, allow_unused=True)
        loss = recon
        if kl:
            loss = loss - 0.5 * (1 + logvar - mu.pow(2) - logvar.exp()).mean()
        loss.backward()
    cut = all(g is None or not bool(g.any()) for g in through)  # torch's own truth
    named = how.startswith("torch.") and "detached" not in how
    assert cut == (named or how in ("Normal.sample()", "torch.normal(detached)")), how
    text = w.summary(checks=False)
    said = "a random sample is drawn from values that require grad" in text
    assert said == named, (how, text)
    if said:
        assert ("torch.bernoulli" if "bernoulli" in how else "torch.normal") in text
        assert "mu.weight" in text or "enc.weight" in text
