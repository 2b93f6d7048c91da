"""GAN step written with one forward: the discriminator's optimizer steps (an in-place update
of D's weights) before the generator's loss is backpropagated through D; that backward raises
and the generator gets no gradient.

Source: https://blog.csdn.net/odbej/article/details/125158288 ("GAN训练中的inplace问题": the
optimizer's step() is an in-place operation on D's parameters that G's backward needs);
also https://php.bkmy88.com/faq/1575425.html.
"""

import torch
from scenario_kit import CLAIMS_NO_ZERO_GRAD, FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://blog.csdn.net/odbej/article/details/125158288"
DESCRIPTION = "GAN: optD.step() before lossG.backward(); G's backward raises, G gets nothing"
ASK = ["G.0.weight"]
MUST = [
    [r"in-?place", r"modified"],
    [r"optimizer", r"\bstep\b", r"\bD\b", r"discriminator", r"\bD\.\d"],
]
MUST_NOT = [FALSE_OK, CLAIMS_NO_ZERO_GRAD]


class GAN(nn.Module):
    def __init__(self):
        super().__init__()
        self.G = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 6))
        self.D = nn.Sequential(nn.Linear(6, 8), nn.LeakyReLU(0.2), nn.Linear(8, 1))


def step(watch):
    torch.manual_seed(0)
    gan = GAN()
    opt_g = torch.optim.Adam(gan.G.parameters(), lr=1e-3)
    opt_d = torch.optim.Adam(gan.D.parameters(), lr=1e-3)
    z, real = torch.randn(16, 4), torch.randn(16, 6)
    ones, zeros = torch.ones(16, 1), torch.zeros(16, 1)
    error = None
    try:
        with watch(gan) as w:
            fake = gan.G(z)
            d_real, d_fake = gan.D(real), gan.D(fake)
            loss_d = F.binary_cross_entropy_with_logits(
                d_real, ones
            ) + F.binary_cross_entropy_with_logits(d_fake, zeros)
            loss_g = F.binary_cross_entropy_with_logits(d_fake, ones)
            opt_d.zero_grad()
            loss_d.backward(retain_graph=True)
            opt_d.step()
            opt_g.zero_grad()
            loss_g.backward()
            opt_g.step()
    except RuntimeError as e:
        error = e
    return Run(w=w, model=gan, error=error)


def truth(run):
    assert run.error is not None and "inplace operation" in str(run.error)
    assert all(p.grad is None for p in run.model.G.parameters())
