"""Every block checkpointed (torch.utils.checkpoint, use_reentrant=True); one block in the
middle is a frozen pretrained layer whose forward runs under torch.no_grad().  Checkpointing
marks the block's output as requiring grad (its input does), but the recomputation under
no_grad produces nothing to backpropagate, and loss.backward() raises "none of output has
requires_grad=True, this checkpoint() is not necessary".

Source: https://app.semanticdiff.com/gh/strisunshinewentingwang/pytorch/commit/16f4501cd49e86ba9497873d23bf816313e7fb4b
(a copy of pytorch/pytorch#37266, "Improve checkpoint docs to warn users about detached
gradient issues": "checkpointing models that use detach() or torch.no_grad() to freeze their
model layers/weights during training ... training with checkpoint will fail as it forces the
outputs to require gradients when the model itself does not").
"""

import torch
from scenario_kit import FALSE_OK, Run
from torch import nn
from torch.nn import functional as F
from torch.utils.checkpoint import checkpoint

SOURCE = (
    "https://app.semanticdiff.com/gh/strisunshinewentingwang/pytorch/commit/"
    "16f4501cd49e86ba9497873d23bf816313e7fb4b"
)
DESCRIPTION = "reentrant checkpoint around a block frozen by torch.no_grad(): backward raises"
ASK = []
MUST = [
    [
        r"none of output has requires_grad",
        r"RuntimeError",
        r"\braised\b",
        r"exception",
        r"\berror\b",
    ],
    [r"checkpoint", r"block2"],
]
MUST_NOT = [FALSE_OK]


class FrozenBlock(nn.Module):
    def __init__(self, by_no_grad):
        super().__init__()
        self.lin = nn.Linear(16, 16)
        self.by_no_grad = by_no_grad
        if not by_no_grad:
            self.lin.requires_grad_(False)

    def forward(self, h):
        if self.by_no_grad:
            with torch.no_grad():
                return torch.tanh(self.lin(h))
        return torch.tanh(self.lin(h))


class Net(nn.Module):
    def __init__(self, by_no_grad):
        super().__init__()
        self.stem = nn.Linear(8, 16)
        self.block1 = nn.Sequential(nn.Linear(16, 16), nn.Tanh())
        self.block2 = FrozenBlock(by_no_grad)
        self.head = nn.Linear(16, 3)

    def forward(self, x):
        h = self.stem(x)
        for block in (self.block1, self.block2):
            h = checkpoint(block, h, use_reentrant=True)
        return self.head(h)


def step(watch, by_no_grad=True):
    torch.manual_seed(0)
    model = Net(by_no_grad)
    g = torch.Generator().manual_seed(1)
    x, y = torch.randn(16, 8, generator=g), torch.randint(0, 3, (16,), generator=g)
    opt = torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=0.1)
    error = None
    try:
        with watch(model) as w:
            opt.zero_grad()
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            opt.step()
    except RuntimeError as e:
        error = e
    return Run(w=w, model=model, error=error)


def truth(run):
    assert run.error is not None
    assert "none of output has requires_grad=True" in str(run.error)
    assert run.model.stem.weight.grad is None and run.model.block1[0].weight.grad is None
