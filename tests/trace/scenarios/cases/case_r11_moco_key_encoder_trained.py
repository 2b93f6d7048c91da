"""MoCo with the key encoder left trainable: ``encoder_k`` is a copy of ``encoder_q`` that should
follow it only by the momentum update ``k = m * k + (1 - m) * q`` (no gradient: MoCo computes the
keys under ``no_grad`` and sets ``requires_grad = False`` on the key encoder).  Here the keys are
computed with grad enabled and the key encoder's parameters still require grad, so the
contrastive loss back-propagates into ``encoder_k`` and the optimizer, built over
``model.parameters()`` as in MoCo's code, steps it on that gradient on top of the momentum update:
the key encoder is trained by SGD, not a slow moving average of the query encoder.

Source: https://disks.eu.org/dfeng/notes/blob/main/MoCo.md (notes on MoCo: one encoder for the
query and a separate one for the key, whose consistency needs "the rapidly changing encoder"
avoided: the key encoder is the momentum copy, not trained by the loss).  The step: a small
MoCo-style model with a fixed queue of negatives, one SGD step, momentum 0.99.
"""

import copy

import torch
from scenario_kit import FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://disks.eu.org/dfeng/notes/blob/main/MoCo.md"
DESCRIPTION = "MoCo key encoder trainable, keys with grad: SGD steps encoder_k on the loss"
ASK = ["encoder_k.0.weight"]
MUST = [
    [r"^summary:[^\n]*encoder_k"],
    [
        r"no_grad",
        r"detach",
        r"requires_grad",
        r"frozen",
        r"(got|gets|received|receives|has) (a |its )?(nonzero |finite )?gradient",
        r"(stepped|updated|moved) by (the |an )?optimizer",
    ],
]
MUST_NOT = [FALSE_OK]
M = 0.99


class MoCo(nn.Module):
    def __init__(self, freeze_key: bool):
        super().__init__()
        self.encoder_q = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 8))
        self.encoder_k = copy.deepcopy(self.encoder_q)
        self.freeze_key = freeze_key
        if freeze_key:
            for p in self.encoder_k.parameters():
                p.requires_grad = False
        g = torch.Generator().manual_seed(2)
        self.register_buffer("queue", F.normalize(torch.randn(64, 8, generator=g), dim=1))

    def forward(self, x_q, x_k):
        q = F.normalize(self.encoder_q(x_q), dim=1)
        with torch.no_grad():  # momentum update of the key encoder
            for pq, pk in zip(
                self.encoder_q.parameters(), self.encoder_k.parameters(), strict=True
            ):
                pk.mul_(M).add_(pq.detach(), alpha=1 - M)
        if self.freeze_key:
            with torch.no_grad():
                k = F.normalize(self.encoder_k(x_k), dim=1)
        else:
            k = F.normalize(self.encoder_k(x_k), dim=1)
        logits = torch.cat([(q * k).sum(1, keepdim=True), q @ self.queue.t()], dim=1) / 0.07
        return F.cross_entropy(logits, torch.zeros(len(x_q), dtype=torch.long))


def step(watch, freeze_key: bool = False):
    torch.manual_seed(0)
    model = MoCo(freeze_key)
    opt = torch.optim.SGD(model.parameters(), lr=0.5, momentum=0.9)
    g = torch.Generator().manual_seed(1)
    x = torch.randn(16, 16, generator=g)
    x_q = x + 0.1 * torch.randn(16, 16, generator=g)
    x_k = x + 0.1 * torch.randn(16, 16, generator=g)
    q0 = [p.detach().clone() for p in model.encoder_q.parameters()]
    k0 = [p.detach().clone() for p in model.encoder_k.parameters()]
    with watch(model) as w:
        opt.zero_grad()
        loss = model(x_q, x_k)
        loss.backward()
        opt.step()
    momentum_only = [M * k + (1 - M) * q for q, k in zip(q0, k0, strict=True)]
    k_grads = [p.grad for p in model.encoder_k.parameters()]
    k_after = [p.detach().clone() for p in model.encoder_k.parameters()]
    return Run(w=w, momentum_only=momentum_only, k_after=k_after, k_grads=k_grads)


def truth(run):
    assert all(g is not None and bool(g.abs().sum() > 0) for g in run.k_grads)
    # the key encoder moved away from the momentum average of the query encoder
    assert all(
        not torch.allclose(a, b, atol=1e-6)
        for a, b in zip(run.k_after, run.momentum_only, strict=True)
    )
