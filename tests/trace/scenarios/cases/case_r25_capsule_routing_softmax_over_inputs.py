"""Dynamic routing between capsules with the coupling coefficients taken as ``softmax(b, dim=1)``
over the 32 lower-level capsules instead of over the 4 higher-level ones (``dim=2``).  Each
higher-level capsule's couplings then sum to 1 over its inputs, each lower capsule's do not: at
the first iteration every coupling is 1/32 instead of 1/4, each output is the mean of its
predictions instead of a quarter of their sum, and the routing-by-agreement updates compete
lower capsules against each other for one output instead of outputs for one lower capsule.  The
gradient is that of another model; every gradient is finite and nonzero and nothing raises.

Source: https://packtpub.com/en-ch/product/tensorflow-machine-learning-projects-9781789132212/chapter/classifying-clothing-images-using-capsule-networks-10/section/understanding-capsules-ch10lvl1sec72
("the lower layer capsule will send their output to the higher-level capsules that match the
input"; "cijs are non-negative in nature and are determined by the dynamic-routing algorithm";
"The sum of the weights of each lower layer capsule i amounts to 1").  Adapted: primary capsules
from a ``Linear(16, 256)`` reshaped to 32 capsules of dimension 8 and squashed, a transformation
``W`` of shape ``(32, 4, 8, 8)``, three routing iterations with the predictions detached in the
first two (as PyTorch implementations do), the margin loss on the output lengths, 64 examples, 4
classes, Adam at 1e-3.
"""

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = (
    "https://packtpub.com/en-ch/product/tensorflow-machine-learning-projects-9781789132212/"
    "chapter/classifying-clothing-images-using-capsule-networks-10/section/"
    "understanding-capsules-ch10lvl1sec72"
)
DESCRIPTION = "capsule routing softmax over the 32 input capsules (dim=1), not the 4 outputs"
ASK = []
MUST = [
    [r"softmax", r"coupling", r"routing"],
    [
        r"\bdim\w*",
        r"\baxis",
        r"over (the )?(input|lower|primary|output|higher|parent)",
        r"sums? to (one|1)",
    ],
]
MUST_NOT = [
    FALSE_OK,
    CLAIMS_NONFINITE,
    r"\bdead\b",
    r"requires_grad\s*(=|is|was)?\s*False",
    r"not in (the |any )?optimi[sz]er",
]
IN_CAPS, OUT_CAPS, DIM = 32, 4, 8


def squash(s):
    n2 = s.pow(2).sum(-1, keepdim=True)
    return n2 / (1 + n2) * s / torch.sqrt(n2 + 1e-8)


class CapsNet(nn.Module):
    def __init__(self, routing_dim):
        super().__init__()
        self.routing_dim = routing_dim
        self.primary = nn.Linear(16, IN_CAPS * DIM)
        self.W = nn.Parameter(0.1 * torch.randn(IN_CAPS, OUT_CAPS, DIM, DIM))

    def forward(self, x, iterations=3):
        u = squash(self.primary(x).view(-1, IN_CAPS, DIM))
        u_hat = torch.einsum("ijab,nib->nija", self.W, u)  # (N, 32, 4, 8)
        b = torch.zeros(u_hat.shape[:3])
        for r in range(iterations):
            c = F.softmax(b, dim=self.routing_dim)
            last = r == iterations - 1
            s = (c.unsqueeze(-1) * (u_hat if last else u_hat.detach())).sum(1)
            v = squash(s)  # (N, 4, 8)
            if not last:
                b = b + (u_hat.detach() * v.unsqueeze(1)).sum(-1)
        return v.norm(dim=-1), c


def margin_loss(lengths, y):
    t = F.one_hot(y, OUT_CAPS).float()
    present = t * F.relu(0.9 - lengths).pow(2)
    absent = 0.5 * (1 - t) * F.relu(lengths - 0.1).pow(2)
    return (present + absent).sum(1).mean()


def data():
    g = torch.Generator().manual_seed(1)
    x = torch.randn(64, 16, generator=g)
    return x, (x[:, :4] - x[:, 4:8]).argmax(1)


def step(watch, routing_dim=1):
    torch.manual_seed(0)
    model = CapsNet(routing_dim)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    x, y = data()
    with watch(model) as w:
        optimizer.zero_grad()
        lengths, c = model(x)
        loss = margin_loss(lengths, y)
        loss.backward()
        grads = {n: p.grad.detach().clone() for n, p in model.named_parameters()}
        optimizer.step()
    return Run(w=w, grads=grads, c=c.detach(), loss=loss.item())


def _gradients(run):
    assert run.loss == run.loss
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n


def truth(run):
    _gradients(run)
    assert torch.allclose(run.c.sum(1), torch.ones(64, OUT_CAPS), atol=1e-5)  # over the inputs
    assert not torch.allclose(run.c.sum(2), torch.ones(64, IN_CAPS), atol=1e-3)
