"""Control: the same checkpointed block returning a dataclass, run with
``checkpoint(..., use_reentrant=False)``. The non-reentrant checkpoint records the forward with
saved-tensor hooks and recomputes the activations in the backward; tensors inside the returned
dataclass keep their history, so the head, the checkpointed block and the input layer all get
finite, nonzero gradients and move.

Source: https://github.com/pytorch/pytorch/issues/124725 ("The behavior is correct when using the
recommended setting - `use_reentrant=False`, does that work for your case?"; "the non-reentrant
version does" consider tensors in nested structures). Adapted: a tanh MLP with an input layer, a
checkpointed two-layer block returning ``Features(h=...)`` and a linear head, SGD.
"""

import dataclasses

import torch
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK, Run
from torch import nn
from torch.nn import functional as F
from torch.utils.checkpoint import checkpoint

SOURCE = "https://github.com/pytorch/pytorch/issues/124725"
DESCRIPTION = "control: non-reentrant checkpoint returning a dataclass: every layer trains"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [CLAIMS_NONFINITE, CLAIMS_ERROR, r"\bnone\b", r"no grad(ient)?\b"]


@dataclasses.dataclass
class Features:
    h: torch.Tensor


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(16, 32)
        self.fc2 = nn.Linear(32, 16)

    def forward(self, x):
        return Features(h=torch.tanh(self.fc2(torch.tanh(self.fc1(x)))))


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.inp = nn.Linear(6, 16)
        self.block = Block()
        self.head = nn.Linear(16, 2)

    def forward(self, x):
        z = torch.tanh(self.inp(x))
        features = checkpoint(self.block, z, use_reentrant=False)
        return self.head(features.h)


def data():
    g = torch.Generator().manual_seed(1)
    x = torch.randn(32, 6, generator=g)
    return x, (x[:, 0] + x[:, 1] > 0).long()


def step(watch):
    torch.manual_seed(0)
    model = Net()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    before = {n: p.detach().clone() for n, p in model.named_parameters()}
    x, y = data()
    with watch(model) as w:
        optimizer.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        grads = {n: p.grad.detach().clone() for n, p in model.named_parameters()}
        optimizer.step()
    return Run(w=w, model=model, before=before, grads=grads, x=x, y=y)


def truth(run):
    torch.manual_seed(0)
    plain = Net()  # the same weights, no checkpoint: the gradients must match
    z = torch.tanh(plain.inp(run.x))
    loss = F.cross_entropy(plain.head(plain.block(z).h), run.y)
    expect = dict(
        zip(
            [n for n, _ in plain.named_parameters()],
            torch.autograd.grad(loss, list(plain.parameters())),
            strict=True,
        )
    )
    for n, p in run.model.named_parameters():
        g = run.grads[n]
        assert torch.allclose(g, expect[n], atol=1e-6), n
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
        assert not torch.equal(p.detach(), run.before[n]), n
