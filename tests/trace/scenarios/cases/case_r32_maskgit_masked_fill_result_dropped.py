"""One MaskGIT training step (masked visual token modelling) whose masking line throws its result
away: ``inputs.masked_fill(mask, MASK_ID)`` returns a new tensor and the input stays the clean token
grid (``masked_fill_``, or ``inputs = inputs.masked_fill(...)``, was meant).  The cross-entropy is
taken at the masked positions, whose true tokens are in the input: the bidirectional transformer is
trained to copy its input, the ``[MASK]`` embedding row is never read (exactly zero gradient), and
after the step the logits at a masked position change when only the token at that position changes.
Every parameter gets a finite, nonzero gradient; nothing raises.

Source: https://www.emergentmind.com/topics/maskgit-style-masked-prediction ("Token embeddings,
optionally augmented by class or conditioning vectors, are input to a deep bidirectional transformer
with full self-attention and no causal mask"; "During training, a random subset of tokens is masked
out, and the model learns to predict masked tokens given the visible context"; "It employs a
cosine-based mask scheduling").  Adapted: 4 x 4 grids of tokens from a codebook of 16 (random, in
place of a VQGAN's), a ``[MASK]`` id of 16, a mask ratio ``cos(pi u / 2)`` per grid with at least one
token masked, two transformer blocks of width 32 with two heads and learned positions, the loss on the
masked positions only, Adam at 1e-3.
"""

import math

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://www.emergentmind.com/topics/maskgit-style-masked-prediction"
DESCRIPTION = "MaskGIT: inputs.masked_fill(mask, MASK) result discarded: model sees the targets"
ASK = []
MUST = [
    [r"masked_fill", r"\[?MASK\]?[- ]?(token|id|embedding)", r"\bmask\w*"],
    [
        r"discard\w*|thrown away|unused result|not assigned|never assigned|return\w* a new",
        r"masked_fill_\b|in[- ]place",
        r"leak\w*",
        r"(sees?|reads?|copies|copy) (the )?(targets?|true tokens?|answers?|labels?)",
    ],
]
MUST_NOT = [FALSE_OK, CLAIMS_NONFINITE, r"\bdead\b"]
CODES, MASK_ID, SIDE, WIDTH, HEADS = 16, 16, 4, 32, 2
TOKENS = SIDE * SIDE


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm1, self.norm2 = nn.LayerNorm(WIDTH), nn.LayerNorm(WIDTH)
        self.qkv = nn.Linear(WIDTH, 3 * WIDTH)
        self.proj = nn.Linear(WIDTH, WIDTH)
        self.mlp = nn.Sequential(nn.Linear(WIDTH, 64), nn.GELU(), nn.Linear(64, WIDTH))

    def forward(self, x):
        b, t, _ = x.shape
        q, k, v = self.qkv(self.norm1(x)).view(b, t, 3, HEADS, -1).permute(2, 0, 3, 1, 4)
        a = (q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1])).softmax(-1) @ v  # no causal mask
        x = x + self.proj(a.transpose(1, 2).reshape(b, t, WIDTH))
        return x + self.mlp(self.norm2(x))


class MaskGIT(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(CODES + 1, WIDTH)  # the codebook's ids and [MASK]
        self.pos = nn.Parameter(0.02 * torch.randn(TOKENS, WIDTH))
        self.blocks = nn.Sequential(Block(), Block())
        self.norm = nn.LayerNorm(WIDTH)
        self.head = nn.Linear(WIDTH, CODES)

    def forward(self, tokens):
        return self.head(self.norm(self.blocks(self.embed(tokens) + self.pos)))


def data():
    g = torch.Generator().manual_seed(1)
    tokens = torch.randint(0, CODES, (16, TOKENS), generator=g)
    ratio = torch.cos(math.pi / 2 * torch.rand(16, generator=g))
    count = torch.ceil(ratio * TOKENS).clamp(min=1)
    order = torch.rand(16, TOKENS, generator=g).argsort(-1).argsort(-1)  # a random rank per token
    return tokens, order < count[:, None]


def masked_input(tokens, mask, assigned):
    inputs = tokens.clone()
    if assigned:
        inputs = inputs.masked_fill(mask, MASK_ID)
    else:
        inputs.masked_fill(mask, MASK_ID)  # the result is thrown away
    return inputs


def step(watch, assigned=False):
    torch.manual_seed(0)
    model = MaskGIT()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    tokens, mask = data()
    with watch(model) as w:
        optimizer.zero_grad()
        inputs = masked_input(tokens, mask, assigned)
        logits = model(inputs)
        loss = F.cross_entropy(logits[mask], tokens[mask])
        loss.backward()
        grads = {n: p.grad.detach().clone() for n, p in model.named_parameters()}
        optimizer.step()
    with torch.no_grad():  # probe: change the true token at each grid's first masked position
        first = mask.float().argmax(-1)
        changed = tokens.clone()
        rows = torch.arange(16)
        changed[rows, first] = (changed[rows, first] + 1) % CODES
        before = model(masked_input(tokens, mask, assigned))[rows, first]
        after = model(masked_input(changed, mask, assigned))[rows, first]
    return Run(
        w=w, grads=grads, loss=float(loss.detach()), inputs=inputs, tokens=tokens, mask=mask,
        moved=float((after - before).abs().max()),
    )  # fmt: skip


def truth(run):
    assert math.isfinite(run.loss) and int(run.mask.sum()) > 40
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
    assert not bool((run.inputs == MASK_ID).any())  # no position is masked in the input
    assert torch.equal(run.inputs, run.tokens)
    assert bool(run.grads["embed.weight"][MASK_ID].abs().sum() == 0)
    assert run.moved > 1e-3  # a masked position's logits read the true token there
