"""A healthy recipe: weight normalization written by hand, ``w = g * v / ||v||`` per output unit,
with the paper's data-dependent initialisation (``v`` drawn with standard deviation 0.05, then ``g
= 1 / std(t)`` and ``b = -mean(t) / std(t)`` for ``t = v . x / ||v||`` on one minibatch, layer by
layer, under ``no_grad``).  The gradients are those the paper derives: ``v``'s gradient is
``g / ||v||`` times the projection of ``w``'s gradient away from ``w``, so each row of ``v``'s
gradient is orthogonal to that row of ``v``; ``g``'s is ``w``'s gradient along ``v / ||v||``.  Every
gradient is finite and nonzero and every parameter moves.

Source: https://lyusungwon.github.io/studies/2018/08/02/wn/ ("The core idea of weight
normalization is to reparameterize the weight to decompose it into scale parameter and direction
parameter"; "w = g / ||v|| v"; "M is a projection matrix that projects on to the complement of the
w vector"; "Vector v is sampled from Gaussian with mean zero and std 0.05. And then, we can
initalize g and b using a single minibatch of data").  Adapted: two such layers, ``WNLinear(8,
16)``, ``Tanh``, ``WNLinear(16, 3)``, 64 examples of 3 classes, SGD at 0.1.
"""

import torch
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://lyusungwon.github.io/studies/2018/08/02/wn/"
DESCRIPTION = "healthy: hand-written weight norm w = g v / ||v||, data-dependent init of g and b"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [CLAIMS_NONFINITE, CLAIMS_ERROR, r"all[- ]zero", r"\bzero grad\w*", r"\bdead\b"]


class WNLinear(nn.Module):
    def __init__(self, n_in, n_out):
        super().__init__()
        self.v = nn.Parameter(0.05 * torch.randn(n_out, n_in))
        self.g = nn.Parameter(torch.ones(n_out))
        self.b = nn.Parameter(torch.zeros(n_out))

    def weight(self):
        return self.g[:, None] * self.v / self.v.norm(dim=1, keepdim=True)

    def forward(self, x):
        return x @ self.weight().T + self.b

    @torch.no_grad()
    def data_init(self, x):
        t = x @ (self.v / self.v.norm(dim=1, keepdim=True)).T
        self.g.copy_(1 / t.std(0))
        self.b.copy_(-t.mean(0) / t.std(0))
        return self(x)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.l1 = WNLinear(8, 16)
        self.l2 = WNLinear(16, 3)

    def forward(self, x):
        return self.l2(torch.tanh(self.l1(x)))


def data():
    g = torch.Generator().manual_seed(1)
    x = torch.randn(64, 8, generator=g)
    return x, (x[:, :3] - 0.5 * x[:, 3:6]).argmax(1)


def step(watch):
    torch.manual_seed(0)
    model = Net()
    x, y = data()
    model.l2.data_init(torch.tanh(model.l1.data_init(x)))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    before = {n: p.detach().clone() for n, p in model.named_parameters()}
    with watch(model) as w:
        optimizer.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        grads = {n: p.grad.detach().clone() for n, p in model.named_parameters()}
        optimizer.step()
    return Run(w=w, model=model, before=before, grads=grads)


def truth(run):
    for layer in ("l1", "l2"):
        v, gv = run.before[f"{layer}.v"], run.grads[f"{layer}.v"]
        cos = (v * gv).sum(1) / (v.norm(dim=1) * gv.norm(dim=1))
        assert float(cos.abs().max()) < 1e-4  # v's gradient orthogonal to v, row by row
    params = dict(run.model.named_parameters())
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
        assert not torch.equal(params[n].detach(), run.before[n]), n
