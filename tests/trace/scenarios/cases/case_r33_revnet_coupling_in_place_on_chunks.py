"""A reversible residual network whose coupling, ``y1 = x1 + F(x2)``, ``y2 = x2 + G(y1)``, was
written in place to save memory (the point of a RevNet), ``x1, x2 = x.chunk(2, dim=1)``, ``x1 +=
self.f(x2)``, ``x2 += self.g(x1)``.  ``chunk`` returns views of one tensor from a function that
returns several views, and autograd forbids editing those in place: the first block's forward
raises ``RuntimeError`` ("Output 0 of Split is a view and is being modified inplace") on the first
step, before any loss exists.  No gradient is computed and no parameter moves.

Source: https://hf.xbzza.cn/spaces/Ahmadzei/RAG/raw/main/chunked/nltk_chunking/model_doc_reformer/chunk_4.txt
("Furthermore, we use reversible residual layers instead of the standard residuals, which allows
storing activations only once in the training process instead of N times, where N is the number of
layers").  Adapted: a stem ``Linear(8, 16)``, three reversible blocks whose ``F`` and ``G`` are
``Linear(8, 8), Tanh`` on the two halves of the channels, a ``Linear(16, 1)`` head, a regression,
Adam at 1e-3.
"""

import torch
from scenario_kit import FALSE_OK, Run, expect_raise
from torch import nn
from torch.nn import functional as F

SOURCE = (
    "https://hf.xbzza.cn/spaces/Ahmadzei/RAG/raw/main/chunked/nltk_chunking/model_doc_reformer/"
    "chunk_4.txt"
)
DESCRIPTION = "RevNet coupling x1 += f(x2) in place on chunk views: the forward raises"
ASK = []
MUST = [
    [r"\braised\b", r"RuntimeError", r"exception", r"\berror\b"],
    [r"in[- ]?place", r"\+=", r"\bviews?\b", r"chunk", r"split"],
]
MUST_NOT = [FALSE_OK, r"\bnan\b", r"\bdead\b", r"all[- ]zero"]


class Reversible(nn.Module):
    def __init__(self, in_place):
        super().__init__()
        self.f = nn.Sequential(nn.Linear(8, 8), nn.Tanh())
        self.g = nn.Sequential(nn.Linear(8, 8), nn.Tanh())
        self.in_place = in_place

    def forward(self, x):
        x1, x2 = x.chunk(2, dim=1)
        if self.in_place:
            x1 += self.f(x2)
            x2 += self.g(x1)
            return torch.cat([x1, x2], 1)
        y1 = x1 + self.f(x2)
        y2 = x2 + self.g(y1)
        return torch.cat([y1, y2], 1)

    def inverse(self, y):
        y1, y2 = y.chunk(2, dim=1)
        x2 = y2 - self.g(y1)
        return torch.cat([y1 - self.f(x2), x2], 1)


class RevNet(nn.Module):
    def __init__(self, in_place):
        super().__init__()
        self.stem = nn.Linear(8, 16)
        self.blocks = nn.ModuleList(Reversible(in_place) for _ in range(3))
        self.head = nn.Linear(16, 1)

    def forward(self, x):
        h = self.stem(x)
        for block in self.blocks:
            h = block(h)
        return self.head(h).squeeze(-1)


def step(watch, in_place=True):
    torch.manual_seed(0)
    model = RevNet(in_place)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    g = torch.Generator().manual_seed(15)
    x = torch.randn(32, 8, generator=g)
    y = torch.sin(x[:, 0]) + x[:, 1] * x[:, 2]
    before = {n: p.detach().clone() for n, p in model.named_parameters()}
    losses, grads = [], []
    with watch(model) as w:

        def train_step():
            optimizer.zero_grad()
            loss = F.mse_loss(model(x), y)
            losses.append(float(loss.detach()))
            loss.backward()
            grads.append({n: p.grad.detach().clone() for n, p in model.named_parameters()})
            optimizer.step()

        error = expect_raise(train_step, RuntimeError)
    rebuilt = []
    if not in_place:
        with torch.no_grad():  # reversibility: each block's input from its output
            h = model.stem(x)
            for b in model.blocks:
                rebuilt.append(torch.allclose(b.inverse(b(h)), h, atol=1e-5))
                h = b(h)
    return Run(
        w=w, error=error, losses=losses, grads=grads, before=before, rebuilt=rebuilt,
        after={n: p.detach().clone() for n, p in model.named_parameters()},
    )  # fmt: skip


def truth(run):
    assert run.error is not None and "modified inplace" in str(run.error), run.error
    assert "view" in str(run.error)
    assert run.losses == [] and run.grads == []
    assert all(torch.equal(run.before[n], run.after[n]) for n in run.before)
