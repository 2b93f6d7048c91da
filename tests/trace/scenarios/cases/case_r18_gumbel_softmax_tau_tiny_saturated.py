"""A categorical autoencoder trained through ``F.gumbel_softmax(logits, tau=1e-3)``, the
temperature set very low so that the relaxed samples look one-hot. At ``tau = 1e-3`` the softmax of
``(logits + gumbel) / tau`` is saturated: the gaps between the perturbed logits, divided by tau, are
hundreds, and almost every sample is exactly one-hot in float32. The softmax's Jacobian
``y (1 - y) / tau`` is then exactly 0 for those rows: the decoder trains, but the encoder's
gradient is zero for those rows and comes from the rare unsaturated sample only (here 31 of 32
samples are exactly one-hot and the encoder's gradient is about 1e-5 of the decoder's), so the
encoder hardly learns which category to pick. Nothing raises; every gradient is finite.

Source: https://masonlwang.com/knowledgemap/notes/concepts/Gumbel-Softmax ("backwards -
differentiate through y_i = softmax(gumbel_noise + logits)"; "high tau = smoother logits, easier to
differentiate, but flat gradients"; "low tau = sharper logits, harder to differentiate").
Adapted: a tanh MLP encoder of 10-dimensional inputs to 5 category logits, a linear decoder,
reconstruction MSE, SGD; the Gumbel noise seeded.
"""

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://masonlwang.com/knowledgemap/notes/concepts/Gumbel-Softmax"
DESCRIPTION = "gumbel_softmax(tau=1e-3): saturated one-hot samples, encoder gradient ~0"
ASK = ["enc.0.weight"]
MUST = [
    [
        r"vanish\w*",
        r"\bzero\b",
        r"tiny|negligible|very small|near(ly)? zero|almost zero",
        r"1e-\d+|\d\.\d+e-\d+",
    ],
    [r"tau\b", r"temperature", r"saturat\w*", r"gumbel", r"softmax", r"one-?hot"],
]
MUST_NOT = [FALSE_OK, CLAIMS_NONFINITE, r"explod\w*"]
TAU = 1e-3


class CatAE(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.Sequential(nn.Linear(10, 16), nn.Tanh(), nn.Linear(16, 5))
        self.dec = nn.Linear(5, 10)

    def forward(self, x, tau):
        z = F.gumbel_softmax(self.enc(x), tau=tau, hard=False)
        return self.dec(z), z


def data():
    g = torch.Generator().manual_seed(1)
    return torch.randn(32, 10, generator=g)


def step(watch):
    torch.manual_seed(0)
    model = CatAE()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    x = data()
    with watch(model) as w:
        optimizer.zero_grad()
        torch.manual_seed(2)  # the Gumbel noise
        recon, z = model(x, TAU)
        loss = F.mse_loss(recon, x)
        loss.backward()
        grads = {n: p.grad.detach().clone() for n, p in model.named_parameters()}
        optimizer.step()
    return Run(w=w, z=z.detach(), grads=grads)


def truth(run):
    one_hot = run.z.max(1).values == 1.0
    assert float(one_hot.float().mean()) >= 0.75  # saturated samples, exactly one-hot
    dec = run.grads["dec.weight"].norm()
    assert float(dec) > 1e-3
    for n in ("enc.0.weight", "enc.2.weight"):
        g = run.grads[n]
        assert bool(torch.isfinite(g).all())
        assert float(g.norm()) < 1e-4 * float(dec), n  # the encoder's gradient vanishes
