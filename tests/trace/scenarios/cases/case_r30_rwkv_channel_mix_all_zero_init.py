"""An RWKV-style language model whose channel-mix block has all four of its matrices initialised to
zero, the receptance ``R``, the key ``K``, the value ``V`` and the output ``W`` (the recipe zeroes
``R`` and ``W`` only).  The block computes ``sigmoid(R x) * W (mish(K x) * V x)``: with ``K = V =
0`` the product ``mish(K x) * V x`` is 0 and its gradient with respect to ``K`` and ``V`` is 0 too
(``mish(0) = 0``, ``V x = 0``), ``W`` sees a zero input and ``R`` a zero output.  Every gradient of
the block, its token-shift mixing factors included, is exactly zero on every step, Adam leaves them
where they are, and the block never trains; the embedding, the layer norm and the head get ordinary
gradients.  Two steps are watched.  Nothing raises.

Source:
https://forgejo.digitalsinus.hu/novarobot/RWKV-LM/commit/9cf873ebb26ed0f1af16c47ac9e3fc4754a7c543?style=unified&whitespace=show-all
("The Channel-mix is similar to GeGLU (https://arxiv.org/abs/2002.05202) with an extra R factor.
Initialize R and W matrices to ZERO for fast & stable convergence."; "Finally, we add extra
token-shift (time-shift mixing)").  Adapted: ``K`` and ``V`` zeroed as well; a vocabulary of 32,
width 16, a hidden size of 32, the channel-mix of RWKV-v1 (``mish(K x) * V x``) after a token shift
with learned mixing factors, a residual, a ``LayerNorm`` and a ``Linear(16, 32)`` head, next-token
prediction on sequences of 16, Adam at 1e-3.
"""

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = (
    "https://forgejo.digitalsinus.hu/novarobot/RWKV-LM/commit/9cf873ebb26ed0f1af16c47ac9e3fc4754a7"
    "c543?style=unified&whitespace=show-all"
)
DESCRIPTION = "RWKV channel-mix with R, K, V and W all zero-initialised: every grad 0, never trains"
ASK = ["block.key.weight"]
MUST = [
    [r"^summary:[^\n]*(block\.|channel[- ]mix)"],
    [
        r"zero[- ]init\w*|zeros?_\(",
        r"initiali[sz]\w* (to|at|with|as) (all )?zeros?",
        r"(weights?|matri(x|ces)|parameters?) (are|is|were|was|start\w*) (all )?(exactly )?(zero|0)\b",
        r"stuck|fixed point|saddle",
    ],
]
MUST_NOT = [FALSE_OK, CLAIMS_NONFINITE, r"requires_grad\s*(=|is|was)?\s*False"]
VOCAB, WIDTH, HIDDEN, LENGTH = 32, 16, 32, 16


class ChannelMix(nn.Module):
    def __init__(self, zero):
        super().__init__()
        self.time_shift = nn.ZeroPad2d((0, 0, 1, -1))
        self.time_mix = nn.Parameter(torch.full((1, 1, WIDTH), 0.5))
        self.key = nn.Linear(WIDTH, HIDDEN, bias=False)
        self.value = nn.Linear(WIDTH, HIDDEN, bias=False)
        self.weight = nn.Linear(HIDDEN, WIDTH, bias=False)
        self.receptance = nn.Linear(WIDTH, WIDTH, bias=False)
        for name in zero:
            nn.init.zeros_(getattr(self, name).weight)

    def forward(self, x):
        x = x * self.time_mix + self.time_shift(x) * (1 - self.time_mix)
        k, v, r = self.key(x), self.value(x), self.receptance(x)
        return torch.sigmoid(r) * self.weight(F.mish(k) * v)


class TinyRWKV(nn.Module):
    def __init__(self, zero):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, WIDTH)
        self.block = ChannelMix(zero)
        self.norm = nn.LayerNorm(WIDTH)
        self.head = nn.Linear(WIDTH, VOCAB)

    def forward(self, tokens):
        x = self.embed(tokens)
        return self.head(self.norm(x + self.block(x)))


def data():
    g = torch.Generator().manual_seed(1)
    start = torch.randint(0, VOCAB, (32, 1), generator=g)
    step = torch.randint(1, 4, (32, 1), generator=g)
    seq = (start + step * torch.arange(LENGTH + 1)) % VOCAB
    return seq[:, :-1], seq[:, 1:]


def step(watch, zero=("receptance", "key", "value", "weight")):
    torch.manual_seed(0)
    model = TinyRWKV(zero)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    before = {n: p.detach().clone() for n, p in model.named_parameters()}
    tokens, target = data()
    grads = []
    with watch(model) as w:
        for _ in range(2):
            optimizer.zero_grad()
            loss = F.cross_entropy(model(tokens).reshape(-1, VOCAB), target.reshape(-1))
            loss.backward()
            grads.append({n: p.grad.detach().clone() for n, p in model.named_parameters()})
            optimizer.step()
    return Run(w=w, model=model, before=before, grads=grads)


def truth(run):
    for g in run.grads:
        for n, t in g.items():
            assert bool(torch.isfinite(t).all()), n
            assert bool(t.abs().sum() == 0) == n.startswith("block."), n
    for n, p in run.model.named_parameters():
        assert torch.equal(p.detach(), run.before[n]) == n.startswith("block."), n
