"""Medusa-1 on a frozen base language model, with the K = 3 extra decoding heads built as
``nn.ModuleList([MedusaHead(...)] * 3)``.  List multiplication repeats the reference: the three
"heads" are one module, so they share every parameter, produce the same logits at every position and
cannot predict different offsets (head ``k`` is meant to predict the token ``k + 2`` ahead).  The
optimizer, built from ``medusa_heads.parameters()``, holds one head's four tensors, and each of them
gets the sum of the three heads' losses' gradients.  The step trains, the losses of the three
offsets are added, every gradient is finite and nonzero; nothing raises.

Source: https://inferenceengineering.tech/glossary/medusa/ ("Medusa attaches several lightweight
feed-forward heads directly to the target model's top layer, each trained to predict the token at a
different future position (head i predicts token t+i)"; "it requires a brief fine-tuning step to
train the extra heads").  Adapted: a frozen base (``Embedding(16, 32)``, a ``GRU(32, 32)``, an LM
head), 3 Medusa heads of one residual block ``x + SiLU(Linear(32, 32)(x))`` and a ``Linear(32,
16)``, 32 sequences of 20 tokens stepping by 1, 2 or 3 modulo 16, cross-entropy of head ``k``
against the token ``k + 2`` ahead, AdamW at 1e-3 on the heads.
"""

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://inferenceengineering.tech/glossary/medusa/"
DESCRIPTION = "Medusa heads as nn.ModuleList([head] * 3): one module, shared weights, same logits"
ASK = []
MUST = [
    [r"medusa_heads|medusa heads?|\bheads?\b"],
    [
        r"(same|one|single) (module|object|instance|head)",
        r"shar\w* (the same )?(weights?|parameters?|module)",
        r"\[[^\]]*\]\s?\*\s?(3|k)\b",
        r"list multiplication|multiplied list",
        r"alias\w*",
        r"(identical|same) (logits|outputs?|predictions?)",
    ],
]
MUST_NOT = [FALSE_OK, CLAIMS_NONFINITE, r"\bdead\b"]
VOCAB, WIDTH, LENGTH, K = 16, 32, 20, 3


class MedusaHead(nn.Module):
    def __init__(self):
        super().__init__()
        self.res = nn.Linear(WIDTH, WIDTH)
        self.out = nn.Linear(WIDTH, VOCAB)

    def forward(self, h):
        return self.out(h + F.silu(self.res(h)))


class MedusaLM(nn.Module):
    def __init__(self, repeated):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, WIDTH)
        self.rnn = nn.GRU(WIDTH, WIDTH, batch_first=True)
        self.lm_head = nn.Linear(WIDTH, VOCAB)
        for p in (*self.embed.parameters(), *self.rnn.parameters(), *self.lm_head.parameters()):
            p.requires_grad_(False)  # Medusa-1: the base model stays untouched
        if repeated:
            self.medusa_heads = nn.ModuleList([MedusaHead()] * K)
        else:
            self.medusa_heads = nn.ModuleList([MedusaHead() for _ in range(K)])

    def forward(self, tokens):
        h, _ = self.rnn(self.embed(tokens))
        return self.lm_head(h), [head(h) for head in self.medusa_heads]


def data():
    g = torch.Generator().manual_seed(1)
    start = torch.randint(0, VOCAB, (32, 1), generator=g)
    stride = torch.randint(1, 4, (32, 1), generator=g)
    return (start + stride * torch.arange(LENGTH)) % VOCAB


def step(watch, repeated=True):
    torch.manual_seed(0)
    model = MedusaLM(repeated)
    optimizer = torch.optim.AdamW(model.medusa_heads.parameters(), lr=1e-3)
    tokens = data()
    with watch(model) as w:
        optimizer.zero_grad()
        _, head_logits = model(tokens)
        losses = [
            F.cross_entropy(
                logits[:, : -(k + 2)].reshape(-1, VOCAB), tokens[:, k + 2 :].reshape(-1)
            )
            for k, logits in enumerate(head_logits)
        ]
        loss = sum(losses)
        loss.backward()
        grads = {n: p.grad.detach().clone() for n, p in model.medusa_heads.named_parameters()}
        optimizer.step()
    with torch.no_grad():
        _, after = model(tokens)
    held = sum(p.numel() for group in optimizer.param_groups for p in group["params"])
    return Run(w=w, model=model, grads=grads, after=after, held=held, losses=losses)


def truth(run):
    heads = run.model.medusa_heads
    assert heads[0] is heads[1] is heads[2]
    assert len(run.grads) == 4  # one head's tensors
    assert run.held == sum(p.numel() for p in heads[0].parameters())
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
    assert torch.equal(run.after[0], run.after[1]) and torch.equal(run.after[1], run.after[2])
