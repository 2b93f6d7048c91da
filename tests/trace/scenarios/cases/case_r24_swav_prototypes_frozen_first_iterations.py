"""A healthy SwAV step with a deliberate gap: during the first iterations the prototypes are
frozen by dropping their gradient after the backward (``prototypes.weight.grad = None`` before
``optimizer.step()``), so only the encoder learns while the codes settle.  The prototypes are
renormalised to unit length before the forward, the codes come from three Sinkhorn-Knopp
iterations under ``torch.no_grad()``, and the loss is the swapped prediction of each view's code
from the other view's scores.  The backward did reach the prototypes (their gradient is nonzero
before it is dropped); they do not move this step.  The encoder's gradients are finite and
nonzero; nothing is wrong.

Source: https://www.xuqiongjie.com/post/ai-fundamentals/ssl/swav ("Prototypes (C): A set of K
trainable prototype vectors, C = {c_1, ..., c_K}, which act as cluster centers"; "Predict q_2 from
z_1, and predict q_1 from z_2"; "The SwAV architecture consists of two main components that are
trained jointly").  Adapted: the freeze of the prototypes in the first iterations is the SwAV
paper's training recipe (its code's ``freeze_prototypes_niters``), not in the stored excerpt; an
``Linear(16, 32)``, ``Tanh``, ``Linear(32, 16)`` encoder, 8 prototypes, two noisy views of 64
examples, temperature 0.1, Sinkhorn epsilon 0.05, SGD at 0.05 with momentum 0.9, the watched step
the first iteration.
"""

import torch
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://www.xuqiongjie.com/post/ai-fundamentals/ssl/swav"
DESCRIPTION = "healthy: SwAV prototypes frozen in the first iterations (grad set to None)"
ASK = []
MUST = [[HEALTHY_OK, r"prototypes?", r"freez\w*", r"frozen"]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    r"\bdead\b",
    r"requires_grad\s*(=|is|was)?\s*False",
    r"not in (the |any )?optimi[sz]er",
    r"encoder\.\S*[^\n]{0,40}\bzero",
]
FREEZE_ITERS, TEMP, SINKHORN_EPS = 100, 0.1, 0.05


class SwAV(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(16, 32), nn.Tanh(), nn.Linear(32, 16))
        self.prototypes = nn.Linear(16, 8, bias=False)

    def forward(self, x):
        return self.prototypes(F.normalize(self.encoder(x), dim=1))


@torch.no_grad()
def sinkhorn(scores, iters=3):
    q = torch.exp(scores / SINKHORN_EPS).T  # (K, B)
    q /= q.sum()
    k, b = q.shape
    for _ in range(iters):
        q /= q.sum(1, keepdim=True)
        q /= k
        q /= q.sum(0, keepdim=True)
        q /= b
    return (q * b).T


def data():
    g = torch.Generator().manual_seed(1)
    x = torch.randn(64, 16, generator=g)
    return x + 0.1 * torch.randn(x.shape, generator=g), x + 0.1 * torch.randn(x.shape, generator=g)


def step(watch, iteration=0):
    torch.manual_seed(0)
    model = SwAV()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    view1, view2 = data()
    with watch(model) as w:
        with torch.no_grad():
            model.prototypes.weight.copy_(F.normalize(model.prototypes.weight, dim=1))
        before = model.prototypes.weight.detach().clone()
        optimizer.zero_grad()
        scores = model(torch.cat([view1, view2]))
        s1, s2 = scores.chunk(2)
        q1, q2 = sinkhorn(s1), sinkhorn(s2)
        loss = -0.5 * (
            (q1 * F.log_softmax(s2 / TEMP, dim=1)).sum(1).mean()
            + (q2 * F.log_softmax(s1 / TEMP, dim=1)).sum(1).mean()
        )
        loss.backward()
        proto_grad = model.prototypes.weight.grad.detach().clone()
        if iteration < FREEZE_ITERS:
            model.prototypes.weight.grad = None
        grads = {
            n: p.grad.detach().clone() for n, p in model.named_parameters() if p.grad is not None
        }
        optimizer.step()
    return Run(w=w, model=model, grads=grads, proto_grad=proto_grad, before=before, q=q1)


def truth(run):
    assert bool(run.proto_grad.abs().sum() > 0)  # the backward reached them
    assert run.model.prototypes.weight.grad is None
    assert torch.equal(run.model.prototypes.weight.detach(), run.before)  # frozen this step
    assert torch.allclose(run.q.sum(1), torch.ones(64), atol=1e-4)
    assert set(run.grads) == {
        "encoder.0.weight",
        "encoder.0.bias",
        "encoder.2.weight",
        "encoder.2.bias",
    }
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
