"""Control: the same categorical autoencoder trained through ``F.gumbel_softmax(logits, tau=1.0)``.
The relaxed samples are soft points of the simplex, the softmax is far from saturation, and the
reconstruction loss sends a gradient of the same order into the encoder as into the decoder. Every
gradient is finite and nonzero.

Source: https://blog.rakeshraushan.org/ml/general-ml/gumbel-softmax.html ("Replace the hard argmax
with a softmax at temperature tau"; "The output y is no longer a one-hot vector but a point on the
simplex, a 'soft sample' that is differentiable in pi everywhere"; "We have traded exactness for a
gradient"). Adapted: a tanh MLP encoder of 10-dimensional inputs to 5 category logits, a linear
decoder, reconstruction MSE, SGD; the Gumbel noise seeded.
"""

import torch
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://blog.rakeshraushan.org/ml/general-ml/gumbel-softmax.html"
DESCRIPTION = "control: gumbel_softmax(tau=1): soft samples, the encoder gets its gradient"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [CLAIMS_NONFINITE, CLAIMS_ERROR, r"vanish\w*", r"saturat\w*"]
TAU = 1.0


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
    assert float((run.z.max(1).values > 0.99).float().mean()) < 0.5  # soft samples
    dec = run.grads["dec.weight"].norm()
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
    for n in ("enc.0.weight", "enc.2.weight"):
        assert float(run.grads[n].norm()) > 1e-2 * float(dec), n
