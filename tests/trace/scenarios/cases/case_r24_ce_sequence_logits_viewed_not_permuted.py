"""A token tagger whose logits have shape ``(N, L, C)`` (batch, sequence, classes) brought to the
``(N, C, L)`` that ``cross_entropy`` wants with ``logits.view(N, C, L)`` instead of
``logits.permute(0, 2, 1)``.  ``view`` keeps the memory order and only relabels the axes: the
"class scores" at position ``l`` are now five numbers taken across neighbouring tokens' logits,
and the loss trains the network on a scrambled problem.  The shapes agree, nothing raises, every
gradient is finite and nonzero; the loss is not the per-token cross-entropy.

Source: https://jishuzhan.net/article/1867893099527671809 ("预测值(logits) 的形状为 (N, C, ...)";
"PyTorch 的 CrossEntropyLoss要求输入张量的第二个维度必须是类别的个数": CrossEntropyLoss requires the
input's second dimension to be the number of classes).  Adapted: an ``Embedding(12, 16)``,
``Linear(16, 16)``, ``Tanh``, ``Linear(16, 5)`` tagger over 32 sequences of 10 tokens whose tag is
``(3 * token + 1) % 5``, the axes moved with ``view``, Adam at 1e-2.
"""

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://jishuzhan.net/article/1867893099527671809"
DESCRIPTION = "(N, L, C) logits reshaped with view(N, C, L) for cross_entropy: classes scrambled"
ASK = []
MUST = [
    [
        r"\bview\b",
        r"reshape",
        r"permute",
        r"transpose",
        r"(class|channel)\w*[^\n]*(dim\w*|axis|axes)",
        r"\(N, ?C",
    ]
]
MUST_NOT = [FALSE_OK, CLAIMS_NONFINITE, r"all[- ]zero", r"\bdead\b"]
N, L, C = 32, 10, 5


class Tagger(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(12, 16)
        self.net = nn.Sequential(nn.Linear(16, 16), nn.Tanh(), nn.Linear(16, C))

    def forward(self, tokens):
        return self.net(self.embed(tokens))  # (N, L, C)


def data():
    g = torch.Generator().manual_seed(1)
    tokens = torch.randint(0, 12, (N, L), generator=g)
    return tokens, (3 * tokens + 1) % C


def step(watch, permute=False):
    torch.manual_seed(0)
    model = Tagger()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    tokens, tags = data()
    with watch(model) as w:
        optimizer.zero_grad()
        logits = model(tokens)
        scores = logits.permute(0, 2, 1) if permute else logits.view(N, C, L)
        loss = F.cross_entropy(scores, tags)
        loss.backward()
        grads = {n: p.grad.detach().clone() for n, p in model.named_parameters()}
        optimizer.step()
    per_token = F.cross_entropy(logits.detach().reshape(-1, C), tags.reshape(-1))
    return Run(w=w, model=model, grads=grads, loss=loss.detach(), per_token=per_token)


def truth(run):
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
    assert not torch.allclose(run.loss, run.per_token, atol=1e-4)  # not the per-token loss
