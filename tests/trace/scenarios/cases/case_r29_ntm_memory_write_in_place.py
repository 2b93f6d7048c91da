"""A neural Turing machine whose write head updates the memory in place, ported from a NumPy
version: ``memory.mul_(1 - w e^T)`` then ``memory.add_(w a^T)``.  Each step first reads: the
content addressing ``softmax(beta * cos(k, M))`` and the read ``w^T M`` save ``M`` for the backward;
the in-place erase and add then change that same tensor.  The forward runs; ``loss.backward()``
raises ``RuntimeError: one of the variables needed for gradient computation has been modified by an
inplace operation``.  No parameter gets a gradient and nothing moves.

Source: https://www.engineermaxxing.com/veanors/papers/ilya30u30/neural-turing-machines.html ("What
if a neural network could read from and write to an external memory, like a computer uses RAM? This
paper made memory differentiable — and taught networks to learn algorithms"; "You store them in
short-term memory, then read them out").  Adapted: the write as in-place ``mul_`` / ``add_`` on the
memory tensor (the page gives the machine, not the slip); a feed-forward controller ``Linear(4 + 8,
32), Tanh`` reading one head per step, content addressing only, a memory of 8 slots of width 8
started from a fixed buffer, erase ``sigmoid`` and add ``tanh`` vectors, an output ``Linear(32 + 8,
4)``; 16 sequences of 5 random binary vectors, each step predicting the previous step's vector, a
binary cross-entropy with logits, Adam at 1e-3.
"""

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://www.engineermaxxing.com/veanors/papers/ilya30u30/neural-turing-machines.html"
DESCRIPTION = "NTM write as memory.mul_(1 - w e^T).add_(w a^T) after the read: backward raises"
ASK = []
MUST = [
    [r"\braised\b", r"RuntimeError", r"exception", r"\berror\b"],
    [
        r"in-?place",
        r"mul_|add_",
        r"modified",
        r"version",
        r"(memory|M)[^\n]{0,60}(overwr|changed|modified|written)",
    ],
]
MUST_NOT = [FALSE_OK, CLAIMS_NONFINITE, r"\bdead\b"]
SLOTS, WIDTH, IN, H, T = 8, 8, 4, 32, 5


class NTM(nn.Module):
    def __init__(self, in_place):
        super().__init__()
        self.in_place = in_place
        self.controller = nn.Sequential(nn.Linear(IN + WIDTH, H), nn.Tanh())
        self.heads = nn.Linear(H, 3 * WIDTH + 1)  # key, erase, add, beta
        self.out = nn.Linear(H + WIDTH, IN)
        g = torch.Generator().manual_seed(2)
        self.register_buffer("memory0", 0.1 * torch.randn(SLOTS, WIDTH, generator=g))

    def forward(self, x):  # x: (B, T, IN)
        b = x.shape[0]
        memory = self.memory0.expand(b, SLOTS, WIDTH).clone()
        read = torch.zeros(b, WIDTH)
        outputs = []
        for t in range(x.shape[1]):
            h = self.controller(torch.cat([x[:, t], read], 1))
            key, erase, add, beta = self.heads(h).split([WIDTH, WIDTH, WIDTH, 1], 1)
            sim = F.cosine_similarity(key[:, None], memory, dim=-1)  # (B, SLOTS)
            weights = torch.softmax(F.softplus(beta) * sim, 1)
            read = torch.bmm(weights[:, None], memory).squeeze(1)
            outputs.append(self.out(torch.cat([h, read], 1)))
            erase_m = weights[..., None] * torch.sigmoid(erase)[:, None]
            add_m = weights[..., None] * torch.tanh(add)[:, None]
            if self.in_place:
                memory.mul_(1 - erase_m).add_(add_m)
            else:
                memory = memory * (1 - erase_m) + add_m
        return torch.stack(outputs, 1)


def data():
    g = torch.Generator().manual_seed(1)
    x = (torch.rand(16, T, IN, generator=g) < 0.5).float()
    target = torch.cat([torch.zeros(16, 1, IN), x[:, :-1]], 1)  # the previous step's vector
    return x, target


def step(watch, in_place=True):
    torch.manual_seed(0)
    model = NTM(in_place)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    before = {n: p.detach().clone() for n, p in model.named_parameters()}
    x, target = data()
    error, grads = None, None
    try:
        with watch(model) as w:
            optimizer.zero_grad()
            loss = F.binary_cross_entropy_with_logits(model(x), target)
            loss.backward()
            grads = {n: p.grad.detach().clone() for n, p in model.named_parameters()}
            optimizer.step()
    except RuntimeError as e:
        error = e
    return Run(w=w, model=model, before=before, error=error, grads=grads)


def truth(run):
    assert run.error is not None
    assert "modified by an inplace operation" in str(run.error)
    for n, p in run.model.named_parameters():
        assert p.grad is None and torch.equal(p.detach(), run.before[n]), n
