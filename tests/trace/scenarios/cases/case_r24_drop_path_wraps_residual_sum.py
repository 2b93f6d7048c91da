"""Stochastic depth written around the whole residual sum: each block returns
``drop_path(x + F(x))`` instead of ``x + drop_path(F(x))``.  With the batch-level drop of the
original method (one Bernoulli coin per block and step), a dropped block multiplies its whole
output by zero: the identity path is dropped with the branch, the next block receives a zero
tensor, and nothing before the dropped block gets any gradient.  In the watched step the middle
block's coin comes up "drop": the stem, the first two blocks and the first linear layer of the last
block (whose input is now zero) get an exactly zero gradient; only the last block's other
parameters and the head learn.  Every gradient is finite; nothing raises.

Source: https://neuroscript-lang.com/docs/primitives/Regularization/droppath ("Randomly drops
entire residual paths during training"; "Drops entire layer outputs, not individual neurons";
"When dropped, input passes through unchanged (via residual)").  Adapted: the drop applied to the
block's output ``x + F(x)`` (the page's "entire layer outputs" read literally), kept blocks scaled
by ``1 / p`` as timm's ``drop_path`` does; the watched step's coins are fixed to keep, drop, keep
(survival probabilities 0.83, 0.67, 0.5, a linear decay); a ``Linear(8, 16)`` stem with ``Tanh``,
three blocks ``F = Linear(16, 16), Tanh, Linear(16, 16)``, a ``Linear(16, 3)`` head, 64 examples,
Adam at 1e-3.
"""

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://neuroscript-lang.com/docs/primitives/Regularization/droppath"
DESCRIPTION = "drop_path(x + F(x)) drops the identity too: everything before the block gets zero"
ASK = ["stem.weight", "blocks.0.f.0.weight"]
MUST = [
    [r"stem\.", r"blocks\.0\.", r"blocks\.1\."],
    [r"\bzero\b", r"no gradient", r"all[- ]zero"],
    [
        r"drop[_ ]?path",
        r"stochastic depth",
        r"identity",
        r"residual",
        r"skip(ped)? connection",
        r"multipl\w* by (a )?zero",
        r"\bmul\b",
        r"\bmask\w*",
    ],
]
MUST_NOT = [
    FALSE_OK,
    CLAIMS_NONFINITE,
    r"\bdead\b",
    r"requires_grad\s*(=|is|was)?\s*False",
    r"not in (the |any )?optimi[sz]er",
]
SURVIVAL = (5 / 6, 2 / 3, 1 / 2)
COINS = (1.0, 0.0, 1.0)  # this step's draws: keep, drop, keep


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.f = nn.Sequential(nn.Linear(16, 16), nn.Tanh(), nn.Linear(16, 16))


class DropPathNet(nn.Module):
    def __init__(self, wrap_sum=True):
        super().__init__()
        self.wrap_sum = wrap_sum
        self.stem = nn.Linear(8, 16)
        self.blocks = nn.ModuleList([Block(), Block(), Block()])
        self.head = nn.Linear(16, 3)

    def forward(self, x, coins=COINS):
        h = torch.tanh(self.stem(x))
        for block, p, coin in zip(self.blocks, SURVIVAL, coins, strict=True):
            keep = torch.tensor(coin) / p
            # the bug: drop_path(x + F(x)); the control: x + drop_path(F(x))
            h = (h + block.f(h)) * keep if self.wrap_sum else h + block.f(h) * keep
        return self.head(h)


def data():
    g = torch.Generator().manual_seed(1)
    x = torch.randn(64, 8, generator=g)
    return x, (x[:, :3] - 0.5 * x[:, 3:6]).argmax(1)


def step(watch, wrap_sum=True):
    torch.manual_seed(0)
    model = DropPathNet(wrap_sum)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    x, y = data()
    with watch(model) as w:
        optimizer.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        grads = {n: p.grad.detach().clone() for n, p in model.named_parameters()}
        optimizer.step()
    return Run(w=w, model=model, grads=grads)


def truth(run):
    zero = {"stem.weight", "stem.bias", "blocks.2.f.0.weight"}
    zero |= {n for n in run.grads if n.startswith(("blocks.0.", "blocks.1."))}
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()), n
        if n in zero:
            assert bool((g == 0).all()), n
        else:
            assert bool(g.abs().sum() > 0), n
