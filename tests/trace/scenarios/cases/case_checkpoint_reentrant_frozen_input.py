"""Reentrant activation checkpointing (use_reentrant=True) whose input does not require grad
(a frozen embedding in front): torch warns "None of the inputs have requires_grad=True.
Gradients will be None" and the checkpointed block's parameters get no gradient.

Source: https://github.com/victorchall/EveryDream2trainer/issues/172 ("[BUG] None of the inputs
have requires_grad=True. Gradients will be None"), also
https://github.com/bitsandbytes-foundation/bitsandbytes/issues/182 and
https://github.com/Liuziyu77/Visual-RFT/issues/198 (gradient checkpointing + frozen base/LoRA).
"""

import warnings

import torch
from scenario_kit import FALSE_OK, Run
from torch import nn
from torch.nn import functional as F
from torch.utils.checkpoint import checkpoint

SOURCE = "https://github.com/victorchall/EveryDream2trainer/issues/172"
DESCRIPTION = "reentrant checkpoint, frozen input: block's params get None (torch warns)"
ASK = ["block.0.weight"]
MUST = [
    [r"checkpoint"],
    [r"block"],
    [r"no gradient", r"\bNone\b", r"requires_grad"],
]
MUST_NOT = [FALSE_OK]


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(30, 16)
        self.emb.weight.requires_grad = False  # frozen base
        self.block = nn.Sequential(nn.Linear(16, 16), nn.ReLU(), nn.Linear(16, 16))
        self.head = nn.Linear(16, 2)

    def forward(self, idx):
        h = self.emb(idx).mean(1)
        h = checkpoint(self.block, h, use_reentrant=True)
        return self.head(h)


def step(watch):
    torch.manual_seed(0)
    model = Net()
    idx, y = torch.randint(0, 30, (8, 4)), torch.randint(0, 2, (8,))
    opt = torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=0.1)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with watch(model) as w:
            opt.zero_grad()
            loss = F.cross_entropy(model(idx), y)
            loss.backward()
            opt.step()
    return Run(w=w, model=model, warned=[str(c.message) for c in caught])


def truth(run):
    assert any("None of the inputs have requires_grad=True" in m for m in run.warned)
    assert all(p.grad is None for p in run.model.block.parameters())
    assert run.model.head.weight.grad is not None
