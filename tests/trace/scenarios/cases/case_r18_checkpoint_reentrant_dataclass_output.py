"""A block run through ``torch.utils.checkpoint.checkpoint(..., use_reentrant=True)`` that returns
its features wrapped in a dataclass. The reentrant checkpoint runs the block under ``no_grad`` and
gives autograd only the tensors it returns directly: tensors inside a custom object, list or dict
are handed back as they are, computed without history. The head therefore reads features with
``requires_grad=False``: the loss backpropagates into the head only, the checkpointed block and
the input layer below it get no gradient (``.grad`` stays None) and never move. Nothing raises (the
head's parameters require grad).

Source: https://github.com/pytorch/pytorch/issues/124725 ("Checkpointed function does not preserve
`requires_grad` if output is a dataclass"; "this is expected behavior due to limitation of
`use_reentrant=True` activation checkpoint. > The reentrant version does not consider tensors in
nested structures (e.g., custom objects, lists, dicts, etc) as participating in autograd, while the
non-reentrant version does"). Adapted: a tanh MLP with an input layer, a checkpointed two-layer
block returning ``Features(h=...)`` and a linear head, SGD.
"""

import dataclasses

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn
from torch.nn import functional as F
from torch.utils.checkpoint import checkpoint

SOURCE = "https://github.com/pytorch/pytorch/issues/124725"
DESCRIPTION = "reentrant checkpoint returning a dataclass: block and layers below get no gradient"
ASK = ["block.fc1.weight", "inp.weight"]
MUST = [
    [r"checkpoint\w*", r"reentrant"],
    [
        r"\bnone\b",
        r"no grad\w*",
        r"(never|not|did not|didn't) (get|got|receive\w*|reach\w*)[^\n]{0,30}grad",
        r"(never|not|did not|didn't) (move|change|update)",
    ],
]
MUST_NOT = [
    FALSE_OK,
    CLAIMS_NONFINITE,
    r"not in (the |any )?optimizer",
    r"(parameters?|block|weights?) (are|is|were|was) frozen",
]


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
    def __init__(self, reentrant):
        super().__init__()
        self.inp = nn.Linear(6, 16)
        self.block = Block()
        self.head = nn.Linear(16, 2)
        self.reentrant = reentrant

    def forward(self, x):
        z = torch.tanh(self.inp(x))
        features = checkpoint(self.block, z, use_reentrant=self.reentrant)
        return self.head(features.h)


def data():
    g = torch.Generator().manual_seed(1)
    x = torch.randn(32, 6, generator=g)
    return x, (x[:, 0] + x[:, 1] > 0).long()


def step(watch, reentrant=True):
    torch.manual_seed(0)
    model = Net(reentrant)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    before = {n: p.detach().clone() for n, p in model.named_parameters()}
    x, y = data()
    with watch(model) as w:
        optimizer.zero_grad()
        logits = model(x)
        loss = F.cross_entropy(logits, y)
        loss.backward()
        optimizer.step()
    return Run(w=w, model=model, before=before, reentrant=reentrant)


def truth(run):
    z = torch.tanh(run.model.inp(torch.randn(4, 6)))
    assert not checkpoint(run.model.block, z, use_reentrant=True).h.requires_grad
    for n, p in run.model.named_parameters():
        if n.startswith("head."):
            assert p.grad is not None and bool(p.grad.abs().sum() > 0), n
            assert not torch.equal(p.detach(), run.before[n]), n
        else:
            assert p.grad is None, n  # below the checkpoint: no gradient
            assert torch.equal(p.detach(), run.before[n]), n
