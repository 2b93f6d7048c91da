"""A healthy ELECTRA step that looks broken: replaced token detection with a small generator and a
discriminator sharing the token embedding.  15% of the positions are masked, the generator is
trained on them with masked language modelling, and its replacements are sampled with
``torch.multinomial``: the sampling cuts the graph, so the discriminator's loss (weighted 50, as in
the paper) reaches the shared embedding and the discriminator but never the generator's layers,
whose gradient comes from the MLM loss alone, by design.  The discriminator labels every position,
real or replaced; one Adam optimizer holds both networks.  Every parameter gets a finite, nonzero
gradient.

Source: https://mbrenndoerfer.com/writing/replaced-token-detection-electra-pretraining ("Instead of
predicting masked tokens, the model classifies every token as either original or replaced. A small
\"generator\" network produces plausible replacements for masked positions, and a larger
\"discriminator\" network learns to detect which tokens have been swapped. Every position
contributes to the loss").  Adapted: a vocabulary of 40 tokens (id 1 the mask), 8 sequences of 16,
token and position embeddings of 32 shared by both networks, each network reading a token with the
mean of its sequence (``Linear`` layers with ``Tanh``), the generator ``32 -> 16 -> 40``, the
discriminator ``32 -> 32 -> 1``, labels ``corrupted != original``, Adam at 1e-3.
"""

import math

import torch
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://mbrenndoerfer.com/writing/replaced-token-detection-electra-pretraining"
DESCRIPTION = "healthy: ELECTRA, multinomial-sampled replacements: generator trained by MLM only"
ASK = []
MUST = [[HEALTHY_OK, r"(sampl\w*|multinomial)[^\n]{0,80}(by design|intended|expected)"]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    r"only through (an )?integer",
    r"never (move|moved|moves|update|learn)",
    r"all[- ]zero",
    r"\bdead\b",
    r"not in (the |any )?optimi[sz]er",
]
VOCAB, LENGTH, BATCH, MASK_ID, DIM = 40, 16, 8, 1, 32


class Mixer(nn.Module):
    """A token's features from itself and the mean of its sequence."""

    def __init__(self, width, out):
        super().__init__()
        self.token, self.context = nn.Linear(DIM, width), nn.Linear(DIM, width)
        self.out = nn.Linear(width, out)

    def forward(self, e):
        return self.out(torch.tanh(self.token(e) + self.context(e.mean(1, keepdim=True))))


class Electra(nn.Module):
    def __init__(self):
        super().__init__()
        self.tokens = nn.Embedding(VOCAB, DIM)
        self.positions = nn.Embedding(LENGTH, DIM)
        self.generator = Mixer(16, VOCAB)
        self.discriminator = Mixer(32, 1)

    def embed(self, ids):
        return self.tokens(ids) + self.positions(torch.arange(LENGTH))


def data():
    g = torch.Generator().manual_seed(1)
    ids = torch.randint(2, VOCAB, (BATCH, LENGTH), generator=g)
    masked = torch.rand(BATCH, LENGTH, generator=g) < 0.15
    return ids, masked


def step(watch):
    torch.manual_seed(0)
    model = Electra()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    ids, masked = data()
    with watch(model) as w:
        optimizer.zero_grad()
        gen_logits = model.generator(model.embed(ids.masked_fill(masked, MASK_ID)))
        mlm = F.cross_entropy(gen_logits[masked], ids[masked])
        sampled = torch.multinomial(torch.softmax(gen_logits[masked], -1), 1).squeeze(-1)
        corrupted = ids.clone()
        corrupted[masked] = sampled
        labels = (corrupted != ids).float()
        disc = F.binary_cross_entropy_with_logits(
            model.discriminator(model.embed(corrupted)).squeeze(-1), labels
        )
        loss = mlm + 50 * disc
        loss.backward()
        grads = {n: p.grad.detach().clone() for n, p in model.named_parameters()}
        optimizer.step()
    return Run(
        w=w,
        grads=grads,
        loss=float(loss.detach()),
        replaced=int(labels.sum()),
        masked=int(masked.sum()),
    )


def truth(run):
    assert math.isfinite(run.loss) and 0 < run.replaced <= run.masked
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
