"""nn.Embedding(max_norm=...) renormalises its rows in place inside the forward; the same weight
was already used by a differentiable op earlier in that forward, so the backward raises.

Source: https://github.com/akanimax/pro_gan_pytorch/pull/37 ("replace buggy `max_norm=1` arg
in `torch.nn.Embedding`", resolving issue #21 of that repository); the in-place edit of
``weight`` during the forward is described in https://alphahinex.github.io/2026/01/11/max-norm-of-pytorch-embedding
("这个“缩小”发生在 forward 的时候,是原地修改 embedding.weight 的部分行").
"""

import torch
from scenario_kit import FALSE_OK, Run
from torch import nn

SOURCE = "https://github.com/akanimax/pro_gan_pytorch/pull/37"
DESCRIPTION = "Embedding(max_norm) renorms weight in place in forward after it was used: raises"
ASK = ["emb.weight"]
MUST = [
    [r"max_norm", r"renorm", r"embedding", r"\bemb\b"],
    [r"in-?place", r"modified"],
]
MUST_NOT = [
    FALSE_OK,
    r"call backward\(\) before optimizer\.step",
    r"(after|before) the optimizer(\.| )step",
]


class Scorer(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(20, 8, max_norm=1.0)
        self.proj = nn.Linear(8, 8)

    def forward(self, x, idx):
        scores = self.proj(x) @ self.emb.weight.t()  # saves emb.weight for the backward
        picked = self.emb(idx)  # renormalises the looked-up rows of emb.weight in place
        return scores.sum(1) + picked.sum(1)


def step(watch):
    torch.manual_seed(0)
    model = Scorer()
    x, idx = torch.randn(4, 8), torch.tensor([1, 2, 3, 4])
    version = model.emb.weight._version
    error = None
    try:
        with watch(model) as w:
            model(x, idx).sum().backward()
    except RuntimeError as e:
        error = e
    return Run(w=w, model=model, error=error, version=version)


def truth(run):
    assert run.error is not None and "inplace operation" in str(run.error)
    assert run.model.emb.weight._version > run.version  # edited during the forward
    norms = run.model.emb.weight.detach()[1:5].norm(dim=1)
    assert bool((norms <= 1.0 + 1e-5).all())
