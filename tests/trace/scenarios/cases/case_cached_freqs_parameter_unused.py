"""A rotary-embedding module with a learnable ``freqs`` parameter whose forward uses a cache
computed once from it: the cached path never touches ``freqs``, which gets no gradient although
its module runs.

Source: https://github.com/openvpi/DiffSinger/pull/244 ("使用的RoPE实现包含的cache机制,当
should_cache时,self.freqs并不包含在前向过程中" -- DDP asked for find_unused_parameters=True).
"""

import torch
from scenario_kit import FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://github.com/openvpi/DiffSinger/pull/244"
DESCRIPTION = "RoPE-like module uses a cache built from freqs: freqs gets no gradient"
ASK = ["rope.freqs"]
MUST = [
    [r"freqs"],
    [
        r"no gradient",
        r"\bNone\b",
        r"cache",
        r"not (used|in the graph|reach)",
        r"detach",
        r"\bcut\b",
        r"did not reach",
        r"never reached",
    ],
]
MUST_NOT = [FALSE_OK, r"'rope'[^\n]*never called", r"\brope\b[^\n]*was never called"]


class Rope(nn.Module):
    def __init__(self, dim=8, length=6):
        super().__init__()
        self.freqs = nn.Parameter(torch.linspace(0.1, 1.0, dim // 2))
        with torch.no_grad():
            angles = torch.arange(length)[:, None] * self.freqs[None, :]
        self.register_buffer("cos_cached", angles.cos().repeat(1, 2), persistent=False)

    def forward(self, x):
        return x * self.cos_cached  # should_cache: self.freqs is not used


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(8, 8)
        self.rope = Rope()
        self.head = nn.Linear(8, 1)

    def forward(self, x):
        return self.head(self.rope(self.proj(x))).mean(1)


def step(watch):
    torch.manual_seed(0)
    model = Net()
    calls = []
    hook = model.rope.register_forward_hook(lambda m, i, o: calls.append(1))
    x, y = torch.randn(4, 6, 8), torch.randn(4, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    try:
        with watch(model) as w:
            opt.zero_grad()
            loss = F.mse_loss(model(x), y)
            loss.backward()
            opt.step()
    finally:
        hook.remove()
    return Run(w=w, model=model, calls=len(calls))


def truth(run):
    assert run.calls == 1
    assert run.model.rope.freqs.grad is None
    assert run.model.proj.weight.grad is not None
