"""Control: the same frozen-embedding model with non-reentrant checkpointing
(use_reentrant=False): the checkpointed block's parameters get their gradients.

Source: https://github.com/victorchall/EveryDream2trainer/issues/172 (the usual fix:
non-reentrant checkpointing, or an input that requires grad).
"""

import torch
from scenario_kit import CLAIMS_NONFINITE, HEALTHY_OK, Run
from torch import nn
from torch.nn import functional as F
from torch.utils.checkpoint import checkpoint

SOURCE = "https://github.com/victorchall/EveryDream2trainer/issues/172"
DESCRIPTION = "control: non-reentrant checkpoint with frozen embedding; block gets gradients"
ASK = []
MUST = [[HEALTHY_OK, r"frozen"]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    r"no gradient (reached|for) block",
    r"checkpoint[^\n]*(no gradient|\bNone\b)",
]


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(30, 16)
        self.emb.weight.requires_grad = False
        self.block = nn.Sequential(nn.Linear(16, 16), nn.ReLU(), nn.Linear(16, 16))
        self.head = nn.Linear(16, 2)

    def forward(self, idx):
        h = self.emb(idx).mean(1)
        h = checkpoint(self.block, h, use_reentrant=False)
        return self.head(h)


def step(watch):
    torch.manual_seed(0)
    model = Net()
    idx, y = torch.randint(0, 30, (8, 4)), torch.randint(0, 2, (8,))
    opt = torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=0.1)
    with watch(model) as w:
        opt.zero_grad()
        loss = F.cross_entropy(model(idx), y)
        loss.backward()
        opt.step()
    return Run(w=w, model=model)


def truth(run):
    for p in run.model.block.parameters():
        assert p.grad is not None and bool(p.grad.abs().sum() > 0)
    assert run.model.emb.weight.grad is None
